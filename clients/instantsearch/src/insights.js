// An insights client for InstantSearch's `insights` middleware (the `insightsClient` option, the role
// of Algolia's search-insights): clicks and conversions become Aisle `POST /events`, with the
// answer's attributionToken (InstantSearch's queryID), the hit's 1-based position and the visitor id
// of a first-party cookie.

import { parseIndexName } from './request.js';
import { createTransport } from './transport.js';
import { cookieVisitor } from './visitor.js';

/** InstantSearch insights method -> Aisle event type (the tenant's, see GET /events/types). */
export const DEFAULT_EVENT_TYPES = {
  clickedObjectIDsAfterSearch: 'click',
  clickedObjectIDs: 'click',
  convertedObjectIDsAfterSearch: 'purchase',
  convertedObjectIDs: 'purchase',
  purchasedObjectIDsAfterSearch: 'purchase',
  purchasedObjectIDs: 'purchase',
  addedToCartObjectIDsAfterSearch: 'add_to_cart',
  addedToCartObjectIDs: 'add_to_cart',
  viewedObjectIDs: null, // views of result pages are not sent (null: dropped)
};
const SEND_EVENTS_TYPES = { click: 'click', conversion: 'purchase', view: null };
const POSITIONS_KEPT = 1000;

function randomId() {
  return globalThis.crypto?.randomUUID ? globalThis.crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
}

/**
 * `aa`-style function: `insightsClient(method, payload)`. Options: `url` (where `POST /events` is
 * answered: the edit service, or the storefront's relay), `tenant` (when the payload's index does not
 * name one), `token`, `visitor` (`{get, set}`, default the `aisle_visitor` cookie), `eventTypes`
 * (overrides of DEFAULT_EVENT_TYPES), `fetch`, `clock` (ms, default Date.now).
 *
 * Each call returns a promise of the `POST /events` answer (or null when nothing is sent). A
 * conversion without positions gets the position of the visitor's last click on that product for
 * that queryID, so a purchase after a click is credited to the same slot.
 */
export function createInsightsClient(options = {}) {
  const { url = '', tenant: defaultTenant, token = null, fetch, clock = Date.now } = options;
  const visitor = options.visitor || cookieVisitor();
  const types = { ...DEFAULT_EVENT_TYPES, ...(options.eventTypes || {}) };
  const http = createTransport({ baseUrl: url, token, fetch });
  const clicked = new Map(); // `${queryID}|${objectID}` -> position
  const listeners = new Set();

  function remember(queryID, objectID, position) {
    clicked.set(`${queryID}|${objectID}`, position);
    if (clicked.size > POSITIONS_KEPT) clicked.delete(clicked.keys().next().value);
  }

  function tenantOf(payload) {
    if (payload.index) return parseIndexName(payload.index).tenant;
    if (defaultTenant) return defaultTenant;
    throw new Error('insights: no tenant (give `tenant` or an index)');
  }

  function events(eventType, payload) {
    const visitorId = payload.userToken ? String(payload.userToken) : visitor.get();
    const objectIDs = payload.objectIDs || [];
    return objectIDs.map((objectID, i) => {
      const event = { visitorId, eventType, productId: String(objectID), timestamp: clock() / 1000, eventId: randomId() };
      if (payload.queryID) {
        event.attributionToken = payload.queryID;
        const position = payload.positions?.[i] ?? clicked.get(`${payload.queryID}|${objectID}`);
        if (position) event.position = position;
        if (eventType === 'click' && position) remember(payload.queryID, objectID, position);
      }
      if (payload.objectData?.[i]?.price !== undefined) event.price = Number(payload.objectData[i].price);
      if (payload.objectData?.[i]?.quantity !== undefined) event.quantity = Number(payload.objectData[i].quantity);
      return event;
    });
  }

  function send(eventType, payload) {
    if (!eventType || !payload?.objectIDs?.length) return Promise.resolve(null);
    // a click on a query suggestion is not a product event
    if (payload.index && parseIndexName(payload.index).suggestions) return Promise.resolve(null);
    return http.post('/events', { events: events(eventType, payload) }, { tenant: tenantOf(payload) });
  }

  function insightsClient(method, payload, ...rest) {
    switch (method) {
      case 'init':
      case 'addAlgoliaAgent':
        return undefined;
      case 'getUserToken': {
        const callback = rest[0];
        const id = visitor.get();
        if (typeof callback === 'function') callback(null, id);
        return id;
      }
      case 'setUserToken':
        if (payload !== undefined && payload !== null && String(payload) !== visitor.get()) {
          visitor.set(String(payload));
          for (const listener of listeners) listener(String(payload));
        }
        return undefined;
      case 'onUserTokenChange': {
        listeners.clear();
        if (typeof payload === 'function') {
          listeners.add(payload);
          if (rest[0]?.immediate) payload(visitor.get());
        }
        return undefined;
      }
      case 'sendEvents': // InstantSearch's own usage events ("instantsearch") are dropped
        return Promise.all(
          (payload || [])
            .filter((e) => e.eventType in SEND_EVENTS_TYPES)
            .map((e) => send(SEND_EVENTS_TYPES[e.eventType], e)),
        );
      default:
        if (method in types) return send(types[method], payload);
        return undefined;
    }
  }
  insightsClient.version = '2.17.3'; // the search-insights API it follows: `init` is optional
  insightsClient.visitorId = () => visitor.get();
  return insightsClient;
}
