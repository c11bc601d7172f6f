// The shop's state in its URL (InstantSearch routing): /shop/?tenant=fashion&q=red+shirt&brand=Nike&
// brand=Puma&category=Apparel+>+Topwear&price=500:2000&sort=price_asc&page=2&ignore=price, so a reload or
// a shared link shows the same query, refinements, sort, page, understood filters set aside and shop. The view (#/product/<id>, #/cart) stays in
// the hash, beside it.

import { history } from 'instantsearch.js/es/lib/routers';

const RESERVED = new Set(['tenant', 'q', 'category', 'price', 'sort', 'page', 'ignore']);
const SORTS = new Set(['price_asc', 'price_desc']);
/** A refinement list's attribute as a URL key: any other key is not the shop's. */
export const ATTRIBUTE = /^[a-z][a-z0-9_]{0,39}$/;
const CATEGORY = 'category.lvl0';

/** The refinement-list attributes a URL refines (brand, color, and what guided search asked). */
export function listAttributes(search = location.search) {
  return [...new URLSearchParams(search).keys()].filter((k) => !RESERVED.has(k) && ATTRIBUTE.test(k));
}

/** `{routing}` of instantsearch() for `tenant`'s index. */
export function routing(tenant) {
  return {
    router: history({
      cleanUrlOnDispose: false,
      createURL({ qsModule, routeState, location }) {
        const query = qsModule.stringify(routeState, { addQueryPrefix: true, arrayFormat: 'repeat', format: 'RFC1738' });
        return `${location.origin}${location.pathname}${query}${location.hash}`;
      },
      parseURL({ qsModule, location }) {
        return qsModule.parse(location.search.slice(1), { arrayLimit: 99 });
      },
      // the router makes its URL when the state changes and writes it 400 ms later: by then the view
      // (the hash) may have changed and the page may hold that state already (app.js navigate())
      push(url) {
        const written = new URL(url);
        const next = `${written.pathname}${written.search}${location.hash}`;
        if (next !== `${location.pathname}${location.search}${location.hash}`) window.history.pushState(null, '', next); // (`history` is the router here)
      },
    }),
    stateMapping: {
      stateToRoute(uiState) {
        const s = uiState[tenant] || {};
        const route = { tenant };
        if (s.query) route.q = s.query;
        for (const [attribute, values] of Object.entries(s.refinementList || {})) {
          if (values?.length && ATTRIBUTE.test(attribute) && !RESERVED.has(attribute)) route[attribute] = values;
        }
        const path = s.hierarchicalMenu?.[CATEGORY];
        if (path?.length) route.category = path.join(' > ');
        if (s.range?.price) route.price = s.range.price;
        const sort = s.sortBy?.split(':')[1];
        if (SORTS.has(sort)) route.sort = sort;
        if (s.page > 1) route.page = s.page;
        const aside = (s.ignoreUnderstood || []).filter((a) => ATTRIBUTE.test(a));
        if (aside.length) route.ignore = aside;
        return route;
      },
      routeToState(route) {
        const s = {};
        const one = (v) => String(Array.isArray(v) ? v[0] : v);
        if (route.q) s.query = one(route.q);
        const lists = {};
        for (const [key, value] of Object.entries(route)) {
          if (!RESERVED.has(key) && ATTRIBUTE.test(key)) lists[key] = [].concat(value).map(String);
        }
        if (Object.keys(lists).length) s.refinementList = lists;
        if (route.category) s.hierarchicalMenu = { [CATEGORY]: one(route.category).split(' > ') };
        if (route.price && /^[\d.]*:[\d.]*$/.test(one(route.price))) s.range = { price: one(route.price) };
        if (SORTS.has(one(route.sort))) s.sortBy = `${tenant}:${one(route.sort)}`;
        const page = Number(one(route.page ?? ''));
        if (Number.isInteger(page) && page > 1) s.page = page;
        const aside = [].concat(route.ignore ?? []).map(String).filter((a) => ATTRIBUTE.test(a));
        if (aside.length) s.ignoreUnderstood = aside;
        return { [tenant]: s };
      },
    },
  };
}
