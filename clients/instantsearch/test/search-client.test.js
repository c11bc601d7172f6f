import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSearchClient, UnsupportedError } from '../src/index.js';
import { FACET_VALUES_SCENARIO, SEARCH_SCENARIOS } from './scenarios.js';
import { BASE, loadPairs, replayer } from './replay.js';

async function run(name, requests = SEARCH_SCENARIOS[name]) {
  const replay = replayer(loadPairs(name));
  const client = createSearchClient({ url: BASE, fetch: replay.fetch });
  const { results } = await client.search(requests);
  assert.deepEqual(replay.unused(), [], 'every recorded request is sent');
  return { results, replay, pairs: loadPairs(name) };
}

const answerOf = (pairs, pred) => pairs.find((p) => pred(p.request.body)).response.body;

test('hits carry objectID, position, queryID and highlighted title', async () => {
  const { results, pairs } = await run('query_with_facets');
  const [r] = results;
  const answer = answerOf(pairs, (b) => b.size === 12);
  assert.equal(r.nbHits, answer.total);
  assert.equal(r.hits.length, 12);
  assert.equal(r.queryID, answer.attributionToken);
  assert.equal(r.hits[0].objectID, answer.products[0].id);
  assert.deepEqual(r.hits.map((h) => h.__position), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.ok(r.hits.every((h) => h.__queryID === answer.attributionToken));
  const marked = r.hits.filter((h) => h._highlightResult.title.value.includes('__ais-highlight__'));
  assert.ok(marked.length > 0, 'some titles have the query words marked');
  for (const h of marked) assert.match(h._highlightResult.title.value, /__ais-highlight__(Running|Shoes?)__\/ais-highlight__/i);
  assert.equal(r.nbPages, Math.ceil(answer.total / 12));
});

test('facets become {value: count}, the category at level 0, the price as facets_stats', async () => {
  const { results, pairs } = await run('query_with_facets');
  const [r] = results;
  const answer = answerOf(pairs, (b) => b.size === 12);
  assert.deepEqual(r.facets.brand, Object.fromEntries(answer.facets.brand.map((v) => [v.value, v.count])));
  assert.deepEqual(Object.keys(r.facets['category.lvl0']), answer.facets.category.map((v) => v.value));
  assert.deepEqual(r.facets.price, {}, 'present, so the helper reads its stats');
  const low = answerOf(pairs, (b) => b.sort === 'price_asc').products[0].price;
  const high = answerOf(pairs, (b) => b.sort === 'price_desc').products[0].price;
  assert.ok(low <= high);
  assert.deepEqual([r.facets_stats.price.min, r.facets_stats.price.max], [low, high]);
});

test('disjunctive refinement: OR within brand, a price range, each facet query without its own refinement', async () => {
  const { results, replay } = await run('disjunctive_brand_and_price');
  const main = replay.sent.find((s) => s.body.size === 12).body;
  assert.deepEqual(main.filters, [
    { field: 'brand', value: ['Nike', 'Puma'] },
    { field: 'price', value: { gte: 1000, lte: 4000 } },
  ]);
  assert.deepEqual(main.facets, ['brand', 'color']);
  const [hits, brandOnly, priceOnly] = results;
  // without the brand refinement there are more brands, and more products
  assert.ok(Object.keys(brandOnly.facets.brand).length > Object.keys(hits.facets.brand).length);
  assert.ok(brandOnly.nbHits > hits.nbHits);
  assert.deepEqual(Object.keys(hits.facets.brand).sort(), ['Nike', 'Puma']);
  for (const h of hits.hits) {
    assert.ok(['Nike', 'Puma'].includes(h.brand));
    assert.ok(h.price >= 1000 && h.price <= 4000);
  }
  // only the shopper's query is an answer analytics records; the helper's facet queries and the
  // price bounds are not
  const recorded = replay.sent.filter((s) => s.body.analytics !== false);
  assert.deepEqual(recorded.map((s) => s.body.size), [12]);
  assert.ok(hits.queryID && !brandOnly.queryID && !priceOnly.queryID);
  // the price facet query is not limited by the price range: its stats reach past it
  assert.ok(priceOnly.facets_stats.price.max > 4000);
});

test('hierarchical menu: the children of the refined level under category.lvl1, full paths', async () => {
  const { results } = await run('hierarchical_category');
  const [main, parents] = results;
  const children = Object.keys(main.facets['category.lvl1']);
  assert.ok(children.length > 1);
  assert.ok(children.every((c) => c.startsWith('Footwear > ')));
  // level 0 of the refined query holds the refined value with every match (as Algolia answers it: the
  // helper breaks on a level missing); its siblings' counts come from the unrefined query
  assert.deepEqual(main.facets['category.lvl0'], { Footwear: main.nbHits });
  assert.ok('Footwear' in parents.facets['category.lvl0']);
  const sum = Object.values(main.facets['category.lvl1']).reduce((a, b) => a + b, 0);
  assert.equal(sum, parents.facets['category.lvl0'].Footwear);
  assert.equal(main.nbHits, parents.facets['category.lvl0'].Footwear);
});

test('sortBy index and page 3: sort, offset, visitor id', async () => {
  const { results, replay } = await run('sorted_third_page');
  assert.deepEqual(
    { sort: replay.sent[0].body.sort, from: replay.sent[0].body.from, size: replay.sent[0].body.size, visitorId: replay.sent[0].body.visitorId },
    { sort: 'price_asc', from: 20, size: 10, visitorId: 'v-recorded-visitor' },
  );
  const [r] = results;
  assert.equal(r.page, 2);
  assert.equal(r.hits[0].__position, 21);
  const prices = r.hits.map((h) => h.price);
  assert.deepEqual(prices, [...prices].sort((a, b) => a - b));
});

test('query suggestions from GET /suggestions, highlighted', async () => {
  const { results, replay, pairs } = await run('suggestions');
  assert.equal(replay.sent[0].path, '/suggestions?qStr=nik&tenant=fashion&limit=5');
  const [r] = results;
  assert.deepEqual(r.hits.map((h) => h.query), pairs[0].response.body.map((s) => s.suggestion));
  assert.match(r.hits[0]._highlightResult.query.value, /^__ais-highlight__Nike__\/ais-highlight__/);
});

test('an empty query asks for no suggestions', async () => {
  const client = createSearchClient({ url: BASE, fetch: () => assert.fail('no request expected') });
  const { results } = await client.search([{ indexName: 'fashion:suggestions', params: { query: ' ' } }]);
  assert.deepEqual(results[0].hits, []);
});

test('Home Depot: hits without facets', async () => {
  const { results } = await run('homedepot_query');
  assert.equal(results[0].hits.length, 5);
  assert.deepEqual(results[0].facets, {});
});

test("a merchandising rule's redirect is in renderingContent and userData", async () => {
  const { results, pairs } = await run('rule_redirect');
  const url = pairs[0].response.body.redirect;
  assert.ok(url);
  assert.deepEqual(results[0].renderingContent.redirect, { url });
  assert.deepEqual(results[0].userData, [{ redirect: url }]);
});

test("Aisle's error envelope rejects with its code and status", async () => {
  const replay = replayer(loadPairs('unknown_facet'));
  const client = createSearchClient({ url: BASE, fetch: replay.fetch });
  await assert.rejects(client.search(SEARCH_SCENARIOS.unknown_facet), { name: 'AisleError', status: 400, code: 'facet_unknown' });
});

test('searchForFacetValues: values of the facet matching the typed prefix', async () => {
  const replay = replayer(loadPairs('facet_values'));
  const client = createSearchClient({ url: BASE, fetch: replay.fetch });
  const [answer] = await client.searchForFacetValues(FACET_VALUES_SCENARIO);
  assert.ok(answer.facetHits.length > 0);
  for (const h of answer.facetHits) {
    assert.ok(h.value.toLowerCase().split(/\W+/).some((w) => w.startsWith('ar')), h.value);
    assert.match(h.highlighted, /__ais-highlight__/);
  }
});

test('answers are cached by request until clearCache', async () => {
  let calls = 0;
  const pairs = loadPairs('homedepot_query');
  const replay = replayer(pairs);
  const counting = (...args) => {
    calls += 1;
    return replay.fetch(...args);
  };
  const client = createSearchClient({ url: BASE, fetch: counting });
  await client.search(SEARCH_SCENARIOS.homedepot_query);
  await client.search(SEARCH_SCENARIOS.homedepot_query);
  assert.equal(calls, 1);
  await client.clearCache();
  await client.search(SEARCH_SCENARIOS.homedepot_query);
  assert.equal(calls, 2);
});

test('a token function is asked again after a 401', async () => {
  const tokens = [];
  const fetch = async (url, init) => {
    tokens.push(init.headers.Authorization);
    const ok = init.headers.Authorization === 'Bearer fresh';
    return new Response(JSON.stringify(ok ? [] : { error: { code: 'token_expired', message: 'expired' } }), { status: ok ? 200 : 401 });
  };
  const client = createSearchClient({ url: BASE, fetch, token: async (refresh) => (refresh ? 'fresh' : 'stale') });
  assert.deepEqual(await client.suggest('fashion', 'ni'), []);
  assert.deepEqual(tokens, ['Bearer stale', 'Bearer fresh']);
});

test('what Aisle cannot answer is refused with a clear error', async () => {
  const client = createSearchClient({ url: BASE, fetch: () => assert.fail('no request expected') });
  const cases = [
    { indexName: 'fashion:newest', params: {} },
    { indexName: 'fashion', params: { facetFilters: ['-brand:Nike'] } },
    { indexName: 'fashion', params: { facetFilters: [['brand:Nike', 'color:Red']] } },
    { indexName: 'fashion', params: { filters: 'brand:Nike' } },
    { indexName: 'fashion', params: { numericFilters: ['price!=10'] } },
    { indexName: 'fashion', params: { aroundLatLng: '40.7, -74.0' } },
    { indexName: 'fashion', params: { distinct: 1 } },
    { indexName: 'fashion', params: { optionalFilters: ['brand:Nike'] } },
  ];
  for (const request of cases) await assert.rejects(client.search([request]), UnsupportedError, JSON.stringify(request));
});

test("guided search's followUp reaches userData, beside a redirect, and is absent otherwise", async () => {
  const { toSearchResult } = await import('../src/response.js');
  const call = { body: { query: 'shirts', from: 0, size: 12, facets: [] }, facetAttributes: [] };
  const request = { indexName: 'fashion', params: { query: 'shirts', hitsPerPage: 12, page: 0 } };
  const followUp = {
    attribute: 'gender', question: 'Who is it for?', number: 1,
    options: [{ value: 'Men', label: 'Men', count: 900 }, { value: 'Women', label: 'Women', count: 400 }],
  };
  const base = { products: [], total: 1300, facets: {}, queryGraph: {} };
  const asked = toSearchResult({ ...base, followUp, redirect: '/sale' }, call, request);
  assert.deepEqual(asked.userData, [{ redirect: '/sale' }, { followUp }]);
  const plain = toSearchResult(base, call, request);
  assert.equal(plain.userData, undefined);
});

test("the answer's queryGraph rides on the result, for widgets showing what the query was understood as", async () => {
  const { results, pairs } = await run('query_with_facets');
  const answer = answerOf(pairs, (b) => b.size === 12);
  assert.deepEqual(results[0].queryGraph, answer.queryGraph);
  assert.ok(results[0].queryGraph.stage);
});

test('the store picked goes with every search as storeId, none without one', async () => {
  const sent = [];
  let store = 'store-12';
  const client = createSearchClient({ url: BASE, storeId: () => store, fetch: async (url, init) => {
    sent.push({ url: String(url), body: init.body ? JSON.parse(init.body) : null });
    const answer = String(url).includes('/stores') ? { stores: ['store-12'] } : { products: [], total: 0, facets: {} };
    return new Response(JSON.stringify(answer), { status: 200 });
  } });
  await client.search([{ indexName: 'fashion', params: { query: 'shoe' } }]);
  store = null;
  await client.search([{ indexName: 'fashion', params: { query: 'shoe' } }]);
  assert.deepEqual(sent.map((s) => s.body.storeId), ['store-12', undefined]);
  assert.deepEqual(await client.stores('fashion'), { stores: ['store-12'] });
  assert.match(sent[2].url, /\/stores\?tenant=fashion$/);
});

test("search as you type: queryType 'prefixLast' is Aisle's prefix, on the shopper's query and the helper's", async () => {
  const sent = [];
  const client = createSearchClient({ url: BASE, fetch: async (url, init) => {
    sent.push(JSON.parse(init.body));
    return new Response(JSON.stringify({ products: [{ id: '1', title: 'Cordless Drill', price: 99 }], total: 1, facets: {} }), { status: 200 });
  } });
  const params = { query: 'cordless dr', hitsPerPage: 12, queryType: 'prefixLast', facets: ['price'] };
  await client.search([{ indexName: 'homedepot', params }, { indexName: 'homedepot', params: { ...params, hitsPerPage: 0, analytics: false } }]);
  assert.ok(sent.length >= 3 && sent.every((b) => b.prefix === true), JSON.stringify(sent));
  sent.length = 0;
  await client.search([{ indexName: 'homedepot', params: { query: 'drill', queryType: 'prefixNone' } }, { indexName: 'homedepot', params: { query: 'saw' } }]);
  assert.deepEqual(sent.map((b) => 'prefix' in b), [false, false], 'whole words unless asked');
  await assert.rejects(client.search([{ indexName: 'homedepot', params: { query: 'dr', queryType: 'prefixAll' } }]), UnsupportedError);
  await assert.rejects(client.search([{ indexName: 'homedepot', params: { query: 'dr', queryType: 'toString' } }]), UnsupportedError);
});

test('a removed understood-filter chip: ignoreUnderstood goes to Aisle as given, once per attribute', async () => {
  const sent = [];
  const client = createSearchClient({ url: BASE, fetch: async (url, init) => {
    sent.push(JSON.parse(init.body));
    return new Response(JSON.stringify({ products: [], total: 0, facets: {} }), { status: 200 });
  } });
  await client.search([{ indexName: 'fashion', params: { query: 'red shirt', ignoreUnderstood: ['color', 'color', 'price'] } }]);
  await client.search([{ indexName: 'fashion', params: { query: 'red shirt' } }]);
  assert.deepEqual(sent.map((b) => b.ignoreUnderstood), [['color', 'price'], undefined]);
});
