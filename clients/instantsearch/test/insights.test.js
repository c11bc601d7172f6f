import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cookieVisitor, createInsightsClient, createSearchClient } from '../src/index.js';
import { INSIGHTS_VISITOR } from './scenarios.js';
import { BASE, loadPairs, replayer } from './replay.js';

const withoutIds = (body) => body && { events: body.events.map(({ eventId, timestamp, ...rest }) => rest) };

test('a click and a purchase after a search: attribution token, position, visitor id', async () => {
  const search = replayer(loadPairs('insights_search'));
  const client = createSearchClient({ url: BASE, fetch: search.fetch });
  const { results } = await client.search([{ indexName: 'fashion', params: { query: 'handbag', hitsPerPage: 5, userToken: INSIGHTS_VISITOR } }]);
  const hit = results[0].hits[2];
  const events = replayer(loadPairs('insights_events'), { ignore: withoutIds });
  const aa = createInsightsClient({ url: BASE, visitor: { get: () => INSIGHTS_VISITOR, set() {} }, fetch: events.fetch });
  const clicked = await aa('clickedObjectIDsAfterSearch', { eventName: 'Hit clicked', index: 'fashion', queryID: results[0].queryID, objectIDs: [hit.objectID], positions: [hit.__position] });
  const bought = await aa('convertedObjectIDsAfterSearch', { eventName: 'Purchased', index: 'fashion', queryID: results[0].queryID, objectIDs: [hit.objectID] });
  assert.deepEqual([clicked, bought], [{ accepted: 1 }, { accepted: 1 }]);
  assert.deepEqual(events.unused(), []);
  const [click, purchase] = events.sent.map((s) => s.body.events[0]);
  assert.deepEqual(
    { type: click.eventType, token: click.attributionToken, position: click.position, visitor: click.visitorId },
    { type: 'click', token: results[0].queryID, position: 3, visitor: INSIGHTS_VISITOR },
  );
  assert.equal(purchase.eventType, 'purchase');
  assert.equal(purchase.position, 3, "the purchase gets the click's position");
  assert.notEqual(click.eventId, purchase.eventId);
  assert.equal(events.sent[0].path, '/events?tenant=fashion');
});

test('the middleware protocol: user token from the cookie, usage events and views dropped', async () => {
  const doc = { cookie: '' };
  const sent = [];
  const aa = createInsightsClient({ url: BASE, tenant: 'fashion', visitor: cookieVisitor(doc), fetch: async (url, init) => {
    sent.push(JSON.parse(init.body));
    return new Response('{"accepted":1}', { status: 202 });
  } });
  let token;
  aa('getUserToken', null, (_e, t) => { token = t; });
  assert.match(token, /^v-[0-9a-f]{32}$/);
  assert.match(doc.cookie, new RegExp(`^aisle_visitor=${token}; Max-Age=31536000; Path=/; SameSite=Lax$`));
  const seen = [];
  aa('onUserTokenChange', (t) => seen.push(t), { immediate: true });
  aa('setUserToken', 'shopper-42');
  assert.deepEqual(seen, [token, 'shopper-42']);
  assert.match(doc.cookie, /^aisle_visitor=shopper-42;/);
  await aa('sendEvents', [{ eventType: 'instantsearch', eventName: '__start__' }]);
  await aa('viewedObjectIDs', { index: 'fashion', objectIDs: ['1'] });
  await aa('clickedObjectIDs', { index: 'fashion:suggestions', objectIDs: ['brand:Nike'] });
  assert.deepEqual(sent, []);
  await aa('sendEvents', [{ eventType: 'click', index: 'fashion', queryID: 'tok', objectIDs: ['7'], positions: [2] }]);
  assert.equal(sent.length, 1);
  assert.deepEqual(
    (({ eventType, productId, visitorId, attributionToken, position }) => ({ eventType, productId, visitorId, attributionToken, position }))(sent[0].events[0]),
    { eventType: 'click', productId: '7', visitorId: 'shopper-42', attributionToken: 'tok', position: 2 },
  );
});

test('a visitor cookie that is not a valid id is replaced', () => {
  const doc = { cookie: 'other=1; aisle_visitor=%3Cscript%3E' };
  const id = cookieVisitor(doc).get();
  assert.match(id, /^v-[0-9a-f]{32}$/);
});
