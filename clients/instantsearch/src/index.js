// @aisle/instantsearch-adapter: Aisle behind InstantSearch.
//
//   import { createSearchClient, createInsightsClient } from '@aisle/instantsearch-adapter';
//   const search = instantsearch({ indexName: 'fashion', searchClient: createSearchClient({ url, token }) });
//   search.use(createInsightsMiddleware({ insightsClient: createInsightsClient({ url: eventsUrl, token }) }));

export { createSearchClient } from './search-client.js';
export { createInsightsClient, DEFAULT_EVENT_TYPES } from './insights.js';
export { cookieVisitor, newVisitorId, VISITOR_COOKIE } from './visitor.js';
export { AisleError } from './transport.js';
export { UnsupportedError, parseIndexName, toAisle } from './request.js';
export { highlightValue } from './highlight.js';
