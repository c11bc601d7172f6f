// InstantSearch's request (one entry of the multi-query `search(requests)`) as an Aisle request.
//
// indexName: "<tenant>" (relevance), "<tenant>:price_asc", "<tenant>:price_desc" (sortBy items), or
// "<tenant>:suggestions" (query suggestions from GET /suggestions).

export const SORTS = ['relevance', 'price_asc', 'price_desc'];
export const SUGGESTIONS = 'suggestions';
export const MAX_SIZE = 100; // POST /search: size <= 100
export const MAX_OFFSET = 10000; // POST /search: from <= 10,000
/** Algolia's `queryType` as Aisle's `prefix`: search as you type matches the last word as a prefix. */
export const QUERY_TYPES = { prefixLast: true, prefixNone: false };
const LEVEL = /^(.+)\.lvl(\d+)$/;
/** Parameters that would change the answer and that Aisle cannot honour: refused, never dropped. */
export const REFUSED = [
  'optionalFilters', 'distinct', 'aroundLatLng', 'aroundLatLngViaIP', 'aroundRadius', 'insideBoundingBox',
  'insidePolygon', 'attributesToSnippet', 'sumOrFiltersScores', 'removeWordsIfNoResults', 'queryLanguages',
];

export class UnsupportedError extends Error {
  constructor(message) {
    super(`Aisle InstantSearch adapter: ${message}`);
    this.name = 'UnsupportedError';
  }
}

/** `{tenant, sort, suggestions}` of an index name (see the module comment). */
export function parseIndexName(indexName) {
  const [tenant, variant = 'relevance', ...rest] = String(indexName).split(':');
  if (!tenant || rest.length) throw new UnsupportedError(`index name '${indexName}' is not "<tenant>[:<sort>]"`);
  if (variant === SUGGESTIONS) return { tenant, sort: 'relevance', suggestions: true };
  if (!SORTS.includes(variant)) {
    throw new UnsupportedError(`sort '${variant}' of index '${indexName}': Aisle sorts are ${SORTS.join(', ')}`);
  }
  return { tenant, sort: variant, suggestions: false };
}

/** The Aisle field of an InstantSearch attribute: "category.lvl1" is the category path "category". */
export function fieldOf(attribute) {
  const m = LEVEL.exec(attribute);
  return m ? m[1] : attribute;
}

/** The level of a hierarchical attribute ("category.lvl1" -> 1), or null. */
export function levelOf(attribute) {
  const m = LEVEL.exec(attribute);
  return m ? Number(m[2]) : null;
}

function asArray(value) {
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

function splitFacetFilter(text) {
  const s = String(text);
  if (s.startsWith('-')) throw new UnsupportedError(`negative facet filter '${s}' (Aisle filters include only)`);
  const at = s.indexOf(':');
  if (at <= 0) throw new UnsupportedError(`facet filter '${s}' is not "attribute:value"`);
  return [s.slice(0, at), s.slice(at + 1).replace(/^\\-/, '-')];
}

/**
 * Aisle filters of InstantSearch's `facetFilters` (AND of entries; an array entry is an OR of
 * values, which Aisle takes as one filter with a list of values, all of one attribute).
 */
export function facetFilters(raw) {
  const filters = [];
  for (const entry of asArray(typeof raw === 'string' ? [raw] : raw)) {
    const group = asArray(entry).map(splitFacetFilter);
    if (!group.length) continue;
    const attrs = new Set(group.map(([a]) => fieldOf(a)));
    if (attrs.size > 1) throw new UnsupportedError(`an OR across attributes (${[...attrs].join(', ')})`);
    const values = group.map(([, v]) => v);
    filters.push({ field: fieldOf(group[0][0]), value: values.length === 1 ? values[0] : values });
  }
  return filters;
}

const OPS = { '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt' };

/** Aisle range filters of InstantSearch's `numericFilters` ("price>=10", "price<=50"), per field. */
export function numericFilters(raw) {
  const ranges = new Map();
  const exact = [];
  for (const entry of asArray(typeof raw === 'string' ? [raw] : raw)) {
    const group = asArray(entry);
    if (group.length > 1) throw new UnsupportedError('an OR of numeric filters');
    const text = String(group[0]).replace(/\s+/g, '');
    const m = /^(.+?)(>=|<=|!=|=|>|<)(-?[\d.eE+-]+)$/.exec(text);
    if (!m) throw new UnsupportedError(`numeric filter '${text}'`);
    const [, field, op, num] = m;
    const value = Number(num);
    if (!Number.isFinite(value)) throw new UnsupportedError(`numeric filter '${text}'`);
    if (op === '!=') throw new UnsupportedError(`numeric filter '${text}' (no "not equal")`);
    if (op === '=') exact.push({ field, value });
    else ranges.set(field, { ...(ranges.get(field) || {}), [OPS[op]]: value });
  }
  return [...exact, ...[...ranges].map(([field, value]) => ({ field, value }))];
}

/**
 * The Aisle call for one InstantSearch request:
 * `{kind: "search", tenant, body, page, hitsPerPage, facetAttributes, statsAttributes}` or
 * `{kind: "suggestions", tenant, params}`. `numericAttributes`: attributes whose facet is
 * `facets_stats` (min and max, for rangeInput and rangeSlider; only the price role: Aisle sorts by it).
 */
export function toAisle(request, { numericAttributes = ['price'] } = {}) {
  const { tenant, sort, suggestions } = parseIndexName(request.indexName);
  const p = request.params || {};
  const query = p.query || '';
  const hitsPerPage = Math.min(Math.max(Number(p.hitsPerPage ?? 20), 0), MAX_SIZE);
  if (suggestions) {
    return { kind: 'suggestions', tenant, query, params: { qStr: query, tenant, limit: Math.min(Math.max(hitsPerPage, 1), 50) } };
  }
  if (p.filters) throw new UnsupportedError(`the "filters" string ('${p.filters}'): use facetFilters and numericFilters`);
  if (p.tagFilters && asArray(p.tagFilters).length) throw new UnsupportedError('tagFilters');
  for (const name of REFUSED) {
    const v = p[name];
    if (v !== undefined && v !== null && v !== false && v !== 0 && v !== '' && !(Array.isArray(v) && !v.length)) {
      throw new UnsupportedError(`the "${name}" parameter`);
    }
  }
  const page = Math.max(Number(p.page || 0), 0);
  const from = Math.min(page * hitsPerPage, MAX_OFFSET);
  const facetAttributes = [];
  const statsAttributes = [];
  for (const attribute of asArray(p.facets)) {
    if (attribute === '*') continue; // "every facet": Aisle needs names; the widgets ask for theirs
    if (numericAttributes.includes(attribute)) statsAttributes.push(attribute);
    else facetAttributes.push(attribute);
  }
  const facets = [...new Set(facetAttributes.map(fieldOf))];
  const body = {
    query,
    tenant,
    size: hitsPerPage,
    from,
    filters: [...facetFilters(p.facetFilters), ...numericFilters(p.numericFilters)],
    facets,
    sort,
  };
  if (p.queryType !== undefined && p.queryType !== null) {
    if (!Object.hasOwn(QUERY_TYPES, p.queryType)) {
      throw new UnsupportedError(`queryType '${p.queryType}': Aisle matches only the last word as a prefix (prefixLast) or none (prefixNone)`);
    }
    // search as you type: the last word, unless a space follows it, also matches the words beginning
    // with it ('cordless dr' finds drills); sent only when asked, Aisle's default is whole words
    if (QUERY_TYPES[p.queryType]) body.prefix = true;
  }
  // attributes the shopper set aside (a removed "Colour: Red" chip): understood from the words, not applied
  if (Array.isArray(p.ignoreUnderstood) && p.ignoreUnderstood.length) {
    body.ignoreUnderstood = [...new Set(p.ignoreUnderstood.map(String))];
  }
  if (p.userToken) body.visitorId = String(p.userToken);
  // the helper's extra queries (a disjunctive facet's counts without its refinement) say analytics:
  // false: Aisle then records no answer for them and gives no attributionToken
  if (p.analytics === false) body.analytics = false;
  return { kind: 'search', tenant, body, page, hitsPerPage, facetAttributes, statsAttributes };
}
