// The InstantSearch requests the recorded pairs were made of (scripts/record.mjs records them against
// running services; the tests replay them). Each scenario: the `search(requests)` argument as
// InstantSearch 4 sends it, or insights calls.

const TAGS = { highlightPreTag: '__ais-highlight__', highlightPostTag: '__/ais-highlight__' };

export const SEARCH_SCENARIOS = {
  // a query with every facet widget of the fashion storefront
  query_with_facets: [
    {
      indexName: 'fashion',
      params: { ...TAGS, query: 'running shoes', hitsPerPage: 12, page: 0, maxValuesPerFacet: 10,
        facets: ['brand', 'color', 'category.lvl0', 'price'], tagFilters: '' },
    },
  ],
  // refinementList (disjunctive: brand Nike OR Puma) and a price range, as the helper splits them:
  // the main query, then one per refined disjunctive facet without its own refinement
  disjunctive_brand_and_price: [
    {
      indexName: 'fashion',
      params: { ...TAGS, query: 'shoes', hitsPerPage: 12, page: 0, facets: ['brand', 'color', 'price'],
        facetFilters: [['brand:Nike', 'brand:Puma']], numericFilters: ['price>=1000', 'price<=4000'] },
    },
    {
      indexName: 'fashion',
      params: { ...TAGS, query: 'shoes', hitsPerPage: 0, page: 0, facets: 'brand', analytics: false, clickAnalytics: false,
        numericFilters: ['price>=1000', 'price<=4000'] },
    },
    {
      indexName: 'fashion',
      params: { ...TAGS, query: 'shoes', hitsPerPage: 0, page: 0, facets: ['price'], analytics: false, clickAnalytics: false,
        facetFilters: [['brand:Nike', 'brand:Puma']] },
    },
  ],
  // hierarchicalMenu refined to Footwear: the children's counts come from the main query, the
  // parents' from the query without the refinement
  hierarchical_category: [
    {
      indexName: 'fashion',
      params: { ...TAGS, query: '', hitsPerPage: 12, page: 0, facets: ['category.lvl0', 'category.lvl1'],
        facetFilters: [['category.lvl0:Footwear']] },
    },
    {
      indexName: 'fashion',
      params: { ...TAGS, query: '', hitsPerPage: 0, page: 0, facets: ['category.lvl0'], analytics: false, clickAnalytics: false },
    },
  ],
  // sortBy "price ascending" and the third page
  sorted_third_page: [
    { indexName: 'fashion:price_asc', params: { ...TAGS, query: 'watch', hitsPerPage: 10, page: 2, userToken: 'v-recorded-visitor' } },
  ],
  // query suggestions (an autocomplete's second index)
  suggestions: [{ indexName: 'fashion:suggestions', params: { ...TAGS, query: 'nik', hitsPerPage: 5 } }],
  // Home Depot: titles only, no facets
  homedepot_query: [{ indexName: 'homedepot', params: { ...TAGS, query: 'cordless drill', hitsPerPage: 5, page: 0 } }],
  // a merchandising rule that redirects the query (the recorder creates it)
  rule_redirect: [{ indexName: 'fashion', params: { ...TAGS, query: 'gift cards', hitsPerPage: 5, page: 0 } }],
  // a facet the tenant does not have: Aisle's 400 facet_unknown
  unknown_facet: [{ indexName: 'homedepot', params: { ...TAGS, query: 'drill', hitsPerPage: 5, facets: ['brand'] } }],
};

export const FACET_VALUES_SCENARIO = [
  { indexName: 'fashion', params: { ...TAGS, query: 'shirt', facetName: 'brand', facetQuery: 'ar', maxFacetHits: 5 } },
];

export const INSIGHTS_VISITOR = 'v-recorded-visitor';
