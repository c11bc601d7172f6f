// The shopper's visitor id, kept in a first-party cookie (what Algolia's search-insights calls the
// anonymous user token): the same id goes with every search (`visitorId`) and every event.

export const VISITOR_COOKIE = 'aisle_visitor';
const ONE_YEAR_SECONDS = 365 * 24 * 3600;
const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** A new random visitor id (`v-` and 32 hex digits). */
export function newVisitorId(random = globalThis.crypto) {
  const bytes = new Uint8Array(16);
  random.getRandomValues(bytes);
  return `v-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The value of cookie `name` in a `document.cookie` string, or null. */
export function readCookie(cookieString, name) {
  for (const part of String(cookieString || '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/**
 * A cookie jar over `doc.cookie` (the browser's `document`, or any object with a `cookie` property).
 * `get()` returns the visitor id, creating and storing one (1 year, SameSite=Lax, path /) when there
 * is none or it is not a valid id; `set(id)` replaces it.
 */
export function cookieVisitor(doc = globalThis.document, { name = VISITOR_COOKIE, maxAge = ONE_YEAR_SECONDS } = {}) {
  let memory = null; // without a document (node), the id lives in memory
  const write = (id) => {
    memory = id;
    if (doc) doc.cookie = `${name}=${encodeURIComponent(id)}; Max-Age=${maxAge}; Path=/; SameSite=Lax`;
  };
  return {
    get() {
      const stored = doc ? readCookie(doc.cookie, name) : memory;
      if (stored && ID_PATTERN.test(stored)) return stored;
      const id = newVisitorId();
      write(id);
      return id;
    },
    set(id) {
      if (!ID_PATTERN.test(String(id))) throw new Error(`visitor id must match ${ID_PATTERN}`);
      write(String(id));
    },
  };
}
