// Record the adapter's request/answer pairs against running Aisle services (AISLE_TOKEN: a token of
// every scope when auth is on), into
// test/recorded/<scenario>.json. Usage:
//   AISLE_SEARCH_URL=http://127.0.0.1:8080 AISLE_EDIT_URL=http://127.0.0.1:8084 node scripts/record.mjs
// The rule_redirect scenario needs a rule redirecting "gift cards" (AISLE_RULES_URL, created here).

import { writeFileSync } from 'node:fs';
import { createInsightsClient, createSearchClient } from '../src/index.js';
import { FACET_VALUES_SCENARIO, INSIGHTS_VISITOR, SEARCH_SCENARIOS } from '../test/scenarios.js';

const searchUrl = process.env.AISLE_SEARCH_URL || 'http://127.0.0.1:8080';
const editUrl = process.env.AISLE_EDIT_URL || 'http://127.0.0.1:8084';
const token = process.env.AISLE_TOKEN || null;
const out = new URL('../test/recorded/', import.meta.url);

function recorder(base) {
  const pairs = [];
  async function fetchRecorded(url, init = {}) {
    const response = await fetch(url, init);
    const text = await response.text();
    const u = new URL(url);
    pairs.push({
      request: { method: init.method, path: u.pathname + u.search, body: init.body ? JSON.parse(init.body) : null },
      response: { status: response.status, body: text ? JSON.parse(text) : null },
    });
    return new Response(text, { status: response.status, headers: response.headers });
  }
  return { pairs, fetch: fetchRecorded, base };
}

function save(name, pairs) {
  pairs.sort((a, b) => JSON.stringify(a.request).localeCompare(JSON.stringify(b.request)));
  writeFileSync(new URL(`${name}.json`, out), JSON.stringify(pairs, null, 1) + '\n');
  console.log(`${name}: ${pairs.length} pairs`);
}

function trimProducts(pairs) {
  // descriptions are long HTML-stripped prose: cut so the recordings stay small
  for (const p of pairs) for (const product of p.response.body?.products || []) {
    if (typeof product.description === 'string') product.description = product.description.slice(0, 80);
  }
}

for (const [name, requests] of Object.entries(SEARCH_SCENARIOS)) {
  const rec = recorder(searchUrl);
  const client = createSearchClient({ url: searchUrl, token, fetch: rec.fetch, cache: false });
  try {
    await client.search(requests);
  } catch (err) {
    console.log(`${name}: ${err.name} ${err.code || ''} (recorded)`);
  }
  // the replaying fetch gives descriptions as recorded: trim the answers before saving
  trimProducts(rec.pairs);
  save(name, rec.pairs);
}

{
  const rec = recorder(searchUrl);
  const client = createSearchClient({ url: searchUrl, token, fetch: rec.fetch, cache: false });
  await client.searchForFacetValues(FACET_VALUES_SCENARIO);
  save('facet_values', rec.pairs);
}

{
  // a search, then a click on its 3rd hit and a purchase of it, then the visitor's events read back
  const srec = recorder(searchUrl);
  const client = createSearchClient({ url: searchUrl, token, fetch: srec.fetch, cache: false });
  const { results } = await client.search([{ indexName: 'fashion', params: { query: 'handbag', hitsPerPage: 5, userToken: INSIGHTS_VISITOR } }]);
  const hit = results[0].hits[2];
  const erec = recorder(editUrl);
  const visitor = { get: () => INSIGHTS_VISITOR, set() {} };
  let t = Date.UTC(2026, 10, 26, 12, 0, 0);
  const aa = createInsightsClient({ url: editUrl, token, visitor, fetch: erec.fetch, clock: () => (t += 1000) });
  await aa('clickedObjectIDsAfterSearch', { eventName: 'Hit clicked', index: 'fashion', queryID: results[0].queryID, objectIDs: [hit.objectID], positions: [hit.__position] });
  await aa('convertedObjectIDsAfterSearch', { eventName: 'Purchased', index: 'fashion', queryID: results[0].queryID, objectIDs: [hit.objectID] });
  trimProducts(srec.pairs);
  save('insights_search', srec.pairs);
  // event ids are random: the replay matches events without them
  save('insights_events', erec.pairs);
}
