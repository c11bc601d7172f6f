// Aisle's answers as InstantSearch results (the shape algoliasearch-helper reads).

import { highlightHit } from './highlight.js';
import { levelOf, MAX_OFFSET } from './request.js';

// Types of Aisle's answers, generated from the search service's OpenAPI by `make clients`
// (openapi-typescript, types/search.d.ts; editors and `tsc --checkJs` read them):
/** @typedef {import('../types/search').components['schemas']['SearchResult']} AisleSearchResult */
/** @typedef {import('../types/search').components['schemas']['SuggestionItem']} AisleSuggestion */

const DEFAULT_TAGS = { preTag: '<em>', postTag: '</em>' };

function tagsOf(params) {
  return {
    preTag: params.highlightPreTag ?? DEFAULT_TAGS.preTag,
    postTag: params.highlightPostTag ?? DEFAULT_TAGS.postTag,
  };
}

function depthOf(filters, field) {
  let depth = 0;
  for (const f of filters) {
    if (f.field !== field) continue;
    for (const v of Array.isArray(f.value) ? f.value : [f.value]) {
      depth = Math.max(depth, String(v).split(' > ').length);
    }
  }
  return depth;
}

function deepestPath(filters, field) {
  let path = '';
  for (const f of filters) {
    if (f.field !== field) continue;
    for (const v of Array.isArray(f.value) ? f.value : [f.value]) {
      if (String(v).split(' > ').length > path.split(' > ').length || !path) path = String(v);
    }
  }
  return path;
}

/**
 * InstantSearch's `facets` (`{attribute: {value: count}}`) of Aisle's (`{field: [{value, count}]}`).
 * A hierarchical attribute ("category.lvlN") gets the category counts Aisle gave, which are at the
 * level below the deepest category filter of the request: they land under that level's attribute.
 * The levels above it hold the refined path's own prefix with every match (`total`), as Algolia
 * answers them: the helper expects every level it asked for (a missing one left a hole its
 * hierarchical facets broke on, so a category menu refined below its top level failed).
 */
export function toFacets(aisleFacets, call, total = 0) {
  const facets = {};
  for (const attribute of call.facetAttributes) {
    const level = levelOf(attribute);
    const field = level === null ? attribute : attribute.replace(/\.lvl\d+$/, '');
    if (level !== null && level < depthOf(call.body.filters, field)) {
      const prefix = deepestPath(call.body.filters, field).split(' > ').slice(0, level + 1).join(' > ');
      facets[attribute] = { [prefix]: total };
      continue;
    }
    const values = aisleFacets?.[field];
    if (!values) continue;
    if (level !== null && level !== depthOf(call.body.filters, field)) continue;
    facets[attribute] = Object.fromEntries(values.map((v) => [v.value, v.count]));
  }
  return facets;
}

/**
 * The InstantSearch result of one `POST /search` answer; `stats`: `{attribute: {min, max}}`.
 * @param {AisleSearchResult} answer
 */
export function toSearchResult(answer, call, request, stats = {}) {
  const params = request.params || {};
  const tags = tagsOf(params);
  const { hitsPerPage, page } = call;
  const token = answer.attributionToken;
  const hits = (answer.products || []).map((product, i) => {
    /** @type {Record<string, unknown>} an InstantSearch hit: the product, its highlights and position */
    const hit = { ...product, objectID: String(product.id) };
    hit._highlightResult = highlightHit(hit, call.body.query, tags);
    hit.__position = call.body.from + i + 1;
    if (token) hit.__queryID = token;
    return hit;
  });
  const reachable = Math.min(answer.total, MAX_OFFSET + hitsPerPage);
  const result = {
    hits,
    nbHits: answer.total,
    page,
    nbPages: hitsPerPage > 0 ? Math.ceil(reachable / hitsPerPage) : 0,
    hitsPerPage,
    processingTimeMS: Math.round(answer.queryGraph?.took_ms ?? 0),
    exhaustiveNbHits: true,
    exhaustiveFacetsCount: true,
    query: call.body.query,
    params: '',
    index: request.indexName,
    facets: toFacets(answer.facets, call, answer.total),
    renderingContent: {},
  };
  if (Object.keys(stats).length) {
    result.facets_stats = stats;
    // the helper reads an attribute's stats only when the attribute is among the facets
    for (const attribute of Object.keys(stats)) result.facets[attribute] = {};
  }
  if (token) result.queryID = token;
  if (answer.redirect) {
    result.renderingContent = { redirect: { url: answer.redirect } };
    result.userData = [{ redirect: answer.redirect }];
  }
  if (answer.followUp) {
    // guided search's question ("Which colour?"), read by a queryRuleCustomData widget like a redirect
    result.userData = [...(result.userData || []), { followUp: answer.followUp }];
  }
  if (answer.correctedQuery) result.correctedQuery = answer.correctedQuery;
  // what the engine understood (attributes and a price named in the query, the stage that answered):
  // the helper copies it onto its SearchResults, where a widget reads it (the storefront's chips)
  if (answer.queryGraph) result.queryGraph = answer.queryGraph;
  return result;
}

/**
 * The InstantSearch result of `GET /suggestions`: hits `{objectID, query, type}`, highlighted.
 * @param {AisleSuggestion[]} items
 */
export function toSuggestionsResult(items, call, request) {
  const tags = tagsOf(request.params || {});
  const hits = items.map((item, i) => {
    const hit = { objectID: `${item.type}:${item.suggestion}`, query: item.suggestion, type: item.type };
    hit._highlightResult = highlightHit({ query: item.suggestion }, call.query, tags);
    hit.__position = i + 1;
    return hit;
  });
  const hitsPerPage = call.params.limit;
  return {
    hits,
    nbHits: hits.length,
    page: 0,
    nbPages: hits.length ? 1 : 0,
    hitsPerPage,
    processingTimeMS: 0,
    exhaustiveNbHits: true,
    query: call.query,
    params: '',
    index: request.indexName,
    facets: {},
    renderingContent: {},
  };
}
