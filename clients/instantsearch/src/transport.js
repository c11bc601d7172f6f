// HTTP to the Aisle services: JSON in and out, the bearer token (a string, or a function returning
// one, asked again once after a 401), Aisle's error envelope turned into an Error.

export class AisleError extends Error {
  /**
   * `status`: HTTP status; `code`: Aisle's stable error code (docs/error-codes.md) when it sent one.
   * @param {string} message
   * @param {{status?: number, code?: string, retryAfter?: string}} [details]
   */
  constructor(message, { status, code, retryAfter } = {}) {
    super(message);
    this.name = 'AisleError';
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/**
 * A transport for `baseUrl` (an absolute URL, or a path such as "" or "/shop" on the page's origin). `token`: a string, null, or `async (refresh) =>
 * string|null` (called with `refresh = true` after a 401). `fetch`: the fetch function (tests pass a
 * recorder).
 */
export function createTransport({ baseUrl = '', token = null, fetch: fetchFn = globalThis.fetch, headers = {} }) {
  const base = String(baseUrl).replace(/\/$/, '');
  let cached = typeof token === 'string' ? token : null;

  async function bearer(refresh) {
    if (typeof token === 'function') {
      if (refresh || cached === null) cached = await token(refresh);
      return cached;
    }
    return token;
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {{params?: Record<string, any>, body?: unknown, form?: FormData}} [request]
   * @param {boolean} [retried]
   */
  async function send(method, path, { params, body, form } = {}, retried = false) {
    const absolute = /^https?:\/\//.test(base);
    const url = new URL(base + path, absolute ? undefined : globalThis.location?.href ?? 'http://localhost/');
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null) url.searchParams.set(k, v);
    /** @type {Record<string, string>} */
    const h = { Accept: 'application/json', ...headers };
    const auth = await bearer(retried);
    if (auth) h.Authorization = `Bearer ${auth}`;
    let payload;
    if (form) payload = form;
    else if (body !== undefined) {
      h['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const target = absolute ? url.toString() : url.pathname + url.search;
    const response = await fetchFn(target, { method, headers: h, body: payload });
    if (response.status === 401 && typeof token === 'function' && !retried) {
      return send(method, path, { params, body, form }, true);
    }
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (!response.ok) {
      const err = data && data.error ? data.error : {};
      throw new AisleError(err.message || `${method} ${path}: HTTP ${response.status}`, {
        status: response.status,
        code: err.code,
        retryAfter: response.headers.get?.('Retry-After') ?? undefined,
      });
    }
    return data;
  }

  return {
    get: (path, params) => send('GET', path, { params }),
    post: (path, body, params) => send('POST', path, { body, params }),
    postForm: (path, form, params) => send('POST', path, { form, params }),
  };
}
