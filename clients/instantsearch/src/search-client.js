// The InstantSearch search client for Aisle: `search(requests)` answers InstantSearch's multi-query
// with one Aisle call per request, in parallel (see request.js for the index names).

import { fold, highlightValue, queryWords } from './highlight.js';
import { toAisle } from './request.js';
import { toSearchResult, toSuggestionsResult } from './response.js';
import { createTransport } from './transport.js';

const CACHE_SIZE = 200;

/**
 * An InstantSearch `searchClient` for an Aisle search service.
 *
 * Options: `url` (the search service; "" for the page's own origin), `token` (a bearer token, or
 * `async (refresh) => token`; a read-only `search:read` token scoped to the tenant is all the page
 * needs), `numericAttributes` (attributes whose facet is `facets_stats`, default ["price"]),
 * `fetch` (for tests), `cache` (answers kept by request, default true; `clearCache()` empties it),
 * `storeId` (the shopper's store, or `() => storeId`: sent as `storeId` with every search, so the
 * tenant's stock setting filters or boosts by that store's inventory; null or "" for none).
 *
 * Besides InstantSearch's `search` and `searchForFacetValues`: `suggest(tenant, query, limit)`,
 * `searchByImage(tenant, file, {size, exclude})` (POST /images/search), `recommend(tenant, body)`
 * (POST /recommendations), `item(tenant, id)` (GET /item/{id}) and `stores(tenant)` (GET /stores: the
 * store ids the tenant's products list inventory for, `{stores: [...]}`).
 */
export function createSearchClient(options = {}) {
  const { url = '', token = null, numericAttributes = ['price'], fetch, cache = true, storeId = null } = options;
  const http = createTransport({ baseUrl: url, token, fetch });
  const answers = new Map();
  const storeOf = typeof storeId === 'function' ? storeId : () => storeId;

  function postSearch(asked) {
    const store = storeOf();
    const body = store ? { ...asked, storeId: String(store) } : asked;
    const key = JSON.stringify(body);
    if (cache && answers.has(key)) return answers.get(key);
    const pending = http.post('/search', body);
    if (cache) {
      answers.set(key, pending);
      pending.catch(() => answers.delete(key));
      if (answers.size > CACHE_SIZE) answers.delete(answers.keys().next().value);
    }
    return pending;
  }

  async function priceStats(call) {
    // min and max of the match set: the cheapest and the dearest product (Aisle sorts by the price role)
    const probe = (sort) => postSearch({ ...call.body, size: 1, from: 0, facets: [], sort, analytics: false });
    const [low, high] = await Promise.all([probe('price_asc'), probe('price_desc')]);
    const stats = {};
    for (const attribute of call.statsAttributes) {
      const min = low.products?.[0]?.[attribute];
      const max = high.products?.[0]?.[attribute];
      if (typeof min === 'number' && typeof max === 'number') stats[attribute] = { min, max, avg: (min + max) / 2, sum: 0 };
    }
    return stats;
  }

  async function one(request) {
    const call = toAisle(request, { numericAttributes });
    if (call.kind === 'suggestions') {
      const items = call.query.trim() ? await http.get('/suggestions', call.params) : [];
      return toSuggestionsResult(items, call, request);
    }
    const [answer, stats] = await Promise.all([
      postSearch(call.body),
      call.statsAttributes.length ? priceStats(call) : Promise.resolve({}),
    ]);
    return toSearchResult(answer, call, request, stats);
  }

  return {
    async search(requests) {
      return { results: await Promise.all(requests.map(one)) };
    },

    async searchForFacetValues(requests) {
      return Promise.all(
        requests.map(async (request) => {
          const { facetName, facetQuery = '', maxFacetHits = 10 } = request.params || {};
          const call = toAisle({ indexName: request.indexName, params: { ...request.params, facets: [facetName], hitsPerPage: 0 } }, { numericAttributes: [] });
          const answer = await postSearch({ ...call.body, facets: [call.body.facets[0]] });
          const words = queryWords(facetQuery);
          const tags = { preTag: request.params?.highlightPreTag ?? '<em>', postTag: request.params?.highlightPostTag ?? '</em>' };
          const values = Object.values(answer.facets || {})[0] || [];
          const facetHits = values
            .filter((v) => !words.length || words.every((w) => fold(v.value).split(/[^\p{L}\p{N}]+/u).some((t) => t.startsWith(w))))
            .slice(0, maxFacetHits)
            .map((v) => ({ value: v.value, count: v.count, highlighted: highlightValue(v.value, words, tags).value }));
          return { facetHits, exhaustiveFacetsCount: true, processingTimeMS: 0 };
        }),
      );
    },

    clearCache() {
      answers.clear();
      return Promise.resolve();
    },

    suggest: (tenant, query, limit = 8) => http.get('/suggestions', { qStr: query, tenant, limit }),

    /**
     * @param {string} tenant
     * @param {Blob} file
     * @param {{size?: number, exclude?: string}} [options]
     */
    searchByImage(tenant, file, { size = 20, exclude } = {}) {
      const form = new FormData();
      form.append('file', file);
      return http.postForm('/images/search', form, { tenant, size, exclude });
    },

    recommend: (tenant, body) => http.post('/recommendations', body, { tenant }),

    item: (tenant, id) => http.get(`/item/${encodeURIComponent(id)}`, { tenant }),

    stores: (tenant) => http.get('/stores', { tenant }),
  };
}
