// The Aisle demo storefront: instantsearch.js widgets over the Aisle adapter, served by the search
// service at /shop/ (see src/aisle/services/search/shop.py). Tenants: ?tenant=fashion (default),
// homedepot, default (Complete Journey grocery: frequently bought together).

import instantsearch from 'instantsearch.js';
import { connectRefinementList } from 'instantsearch.js/es/connectors';
import { createInsightsMiddleware } from 'instantsearch.js/es/middlewares';
import {
  clearRefinements, configure, currentRefinements, hierarchicalMenu, hits, index, pagination,
  queryRuleCustomData, rangeInput, refinementList, sortBy, stats,
} from 'instantsearch.js/es/widgets';
import { createInsightsClient, createSearchClient } from '../src/index.js';
import { cartPage, checkout, createCart } from './cart.js';
import { searchCombobox } from './combobox.js';
import { filtersDrawer } from './drawer.js';
import { listAttributes, routing } from './routing.js';
import { noResultsWidget } from './noresults.js';
import { showRecs } from './recs.js';
import { understoodWidget } from './understood.js';

const TENANTS = {
  fashion: {
    label: 'Fashion (Myntra)', currency: '₹', photos: true, placeholder: 'Search shoes, shirts, watches...', examples: ['shoes', 'shirts', 'watches', 'handbags'],
    facets: ['brand', 'color', 'category', 'price'],
    containers: [['similar-items', 'Similar items'], ['good-better-best', 'Good, better, best']],
  },
  homedepot: { label: 'Home Depot', currency: '$', photos: false, placeholder: 'Search drills, paint, tiles...', examples: ['cordless drill', 'paint', 'tile', 'ceiling fan'], facets: [], containers: [] },
  default: {
    label: 'Grocery (Complete Journey)', currency: '$', photos: false, placeholder: 'Search milk, bread, cereal...', examples: ['milk', 'bread', 'cereal', 'coffee'],
    facets: ['brand', 'category'], containers: [['bought-together', 'Frequently bought together']],
  },
};

const wanted = new URLSearchParams(location.search).get('tenant');
const tenant = wanted in TENANTS ? wanted : 'fashion';
const shop = TENANTS[tenant];
const FACET_LABELS = { brand: 'Brand', color: 'Colour', 'category.lvl0': 'Category', price: 'Price' };
const $ = (sel) => document.querySelector(sel);
const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]);
const money = (p) => (typeof p === 'number' ? `${shop.currency}${p.toLocaleString('en', { maximumFractionDigits: 2 })}` : '');
// a tenant whose `availability` attribute is returned shows it on hits and the product page (issue 41)
const STOCK_LABELS = { OUT_OF_STOCK: 'Out of stock', PREORDER: 'Pre-order', BACKORDER: 'Back-order' };
const photo = (id) => (shop.photos ? `/shop/photos/${tenant}/${encodeURIComponent(id)}` : null);

// ---- the page's token: read-only, this tenant only (GET /shop/session), asked again after a 401 ----
let pendingToken = null;
function token(refresh = false) {
  if (refresh || !pendingToken) {
    pendingToken = fetch(`/shop/session?tenant=${tenant}`).then(async (r) => {
      if (!r.ok) throw new Error(`session: HTTP ${r.status}`);
      return (await r.json()).token;
    });
  }
  return pendingToken;
}

// ---- the shopper's store: a picker shown when the tenant's products list store inventory (GET /stores);
// the choice is remembered per tenant (localStorage) and sent as storeId with every search ----
const STORE_KEY = `aisle_store:${tenant}`;
let store = null; // set once the tenant's stores are known: a remembered store it no longer has is dropped
const searchClient = createSearchClient({ url: '', token, storeId: () => store });
const aa = createInsightsClient({ url: '/shop', tenant, token });
const clickContext = new Map(); // product id -> {queryID, position} of the answer it was opened from
let shownHits = new Map();
const cart = createCart(tenant);

// ---- header: shop selector, cart ----
$('#tenant').innerHTML = Object.entries(TENANTS)
  .map(([name, t]) => `<option value="${name}"${name === tenant ? ' selected' : ''}>${esc(t.label)}</option>`)
  .join('');
$('#tenant').addEventListener('change', (e) => { location.href = `/shop/?tenant=${e.target.value}`; });
for (const section of document.querySelectorAll('aside section[data-facet]')) {
  if (!shop.facets.includes(section.dataset.facet)) section.classList.add('off');
}
if (!shop.photos) $('.photo-search').hidden = true;
// a catalog without photos is a list of rows (no grid of 'no photo' squares); without facets, no sidebar
document.body.classList.add(shop.photos ? 'photos' : 'no-photos');
if (!shop.facets.length) document.body.classList.add('no-facets');

const NO_PHOTO = "this.replaceWith(Object.assign(document.createElement('div'),{className:'nophoto',textContent:'no photo'}))";
/** A product card's inner HTML (a recommendation, a photo search result): its photo carries its title. */
function card(p, extra = '') {
  const src = photo(p.id);
  const name = p.title ?? p.name ?? p.id;
  const img = src ? `<img src="${src}" alt="${esc(name)}" loading="lazy" onerror="${NO_PHOTO}">` : '';
  return `${img}${extra}${p.brand ? `<div class="brandname">${esc(p.brand)}</div>` : ''}<div class="title">${esc(name)}</div><div class="price">${money(p.price)}</div>`;
}

// ---- InstantSearch ----
// the query, refinements, sort and page live in the URL (routing.js): a reload or a shared link keeps them
const routes = routing(tenant);
const search = instantsearch({ indexName: tenant, searchClient, routing: routes, future: { preserveSharedStateOnUnmount: true } });
search.use(createInsightsMiddleware({ insightsClient: aa }));

// the search box and its suggestions: an ARIA combobox (combobox.js)
const queryInput = $('#q');
queryInput.placeholder = shop.placeholder;
const combobox = searchCombobox({
  input: queryInput, list: $('#suggestions'), clear: $('#q-clear'), esc,
  onPick: () => { if (!/^#?\/?$/.test(location.hash)) navigate('#/'); },
});
if (/^#?\/?$/.test(location.hash)) queryInput.focus({ preventScroll: true }); // the results page starts in the box

const widgets = [
  // search as you type: the last word also matches the words beginning with it ('cordless dr' finds
  // drills), on the hits and on every helper query (facet counts, price bounds) alike
  configure({ hitsPerPage: 12, queryType: 'prefixLast' }),
  combobox.searchBox,
  index({ indexName: `${tenant}:suggestions` }).addWidgets([configure({ hitsPerPage: 6 }), combobox.suggestions]),
  understoodWidget({ container: $('#understood'), money, esc }),
  noResultsWidget({ container: $('#no-results'), searchClient, tenant, shop, esc }),
  stats({ container: '#stats', templates: { text: ({ nbHits }) => `${nbHits.toLocaleString('en')} result${nbHits === 1 ? '' : 's'}` } }),
  currentRefinements({ container: '#current', transformItems: (items) => items.map((item) => ({ ...item, label: FACET_LABELS[item.attribute] || item.label })) }),
  clearRefinements({ container: '#clear', templates: { resetLabel: () => 'Clear filters' } }),
  hits({
    container: '#hits',
    transformItems: (items) => {
      shownHits = new Map(items.map((h) => [h.objectID, h]));
      return items;
    },
    templates: {
      item: (hit, { html, components }) => {
        const src = photo(hit.objectID);
        // a link: focusable, opens in a new tab too; its photo's alt text is the product's title
        return html`<a class="card" href=${`#/product/${encodeURIComponent(hit.objectID)}`} data-testid="hit" data-id=${hit.objectID} data-position=${hit.__position}>
          ${src ? html`<img src=${src} alt=${hit.title || ''} loading="lazy" onError=${(e) => e.currentTarget.replaceWith(Object.assign(document.createElement('div'), { className: 'nophoto', textContent: 'no photo' }))} />` : ''}
          ${hit.brand ? html`<div class="brandname">${hit.brand}</div>` : ''}
          <div class="title">${components.Highlight({ hit, attribute: 'title' })}</div>
          <div class="price">${money(hit.price)}</div>
          ${STOCK_LABELS[hit.availability] ? html`<div class="stock" data-testid="stock">${STOCK_LABELS[hit.availability]}</div>` : ''}
        </a>`;
      },
      empty: () => '', // the no-results page says it (noresults.js)
    },
  }),
  pagination({ container: '#pagination', padding: 2 }),
  queryRuleCustomData({
    container: '#followup',
    templates: {
      default: ({ items }, { html }) =>
        html`${items.filter((i) => i.followUp).map(({ followUp: f }) => html`<div class="question" data-testid="follow-up" data-attribute=${f.attribute}>
          <span>${f.question}</span>
          ${f.options.map((o) => html`<button type="button" class="chip" data-value=${o.value}>${o.label} <small>${o.count.toLocaleString('en')}</small></button>`)}
        </div>`)}`,
    },
  }),
  queryRuleCustomData({
    container: '#redirect',
    templates: {
      default: ({ items }, { html }) =>
        html`${items.filter((i) => i.redirect).map((i) => html`<span>A merchandising rule sends this query to <a href=${i.redirect}>${i.redirect}</a>.</span>`)}`,
    },
  }),
];
if (shop.facets.includes('brand')) widgets.push(refinementList({ container: '#brand', attribute: 'brand', searchable: true, searchablePlaceholder: 'Find a brand', limit: 8, showMore: true, showMoreLimit: 30 }));
if (shop.facets.includes('color')) widgets.push(refinementList({ container: '#color', attribute: 'color', limit: 8 }));
if (shop.facets.includes('category')) widgets.push(hierarchicalMenu({ container: '#category', attributes: ['category.lvl0', 'category.lvl1', 'category.lvl2'] }));
if (shop.facets.includes('price')) {
  widgets.push(rangeInput({ container: '#price', attribute: 'price' }));
  widgets.push(sortBy({
    container: '#sort',
    items: [
      { label: 'Relevance', value: tenant },
      { label: 'Price: low to high', value: `${tenant}:price_asc` },
      { label: 'Price: high to low', value: `${tenant}:price_desc` },
    ],
  }));
}
// refinement lists without a list on the page (guided search's answers: gender, usage...) are held by a
// widget without UI, so the URL's refinements of them are kept
const held = new Set(['brand', 'color'].filter((a) => shop.facets.includes(a)));
function holdList(attribute) {
  if (held.has(attribute)) return;
  held.add(attribute);
  search.addWidgets([connectRefinementList(() => {})({ attribute, limit: 30 })]);
}
search.addWidgets(widgets);
for (const attribute of listAttributes()) holdList(attribute);
const drawer = filtersDrawer({ toggle: $('#filters-toggle'), drawer: $('#filters'), backdrop: $('#search-view .backdrop') });
search.on('render', () => {
  const results = search.mainIndex.getResults();
  if (results) {
    document.body.dataset.renderedQuery = results.query;
    $('#results-title').textContent = results.query ? `Results for “${results.query}”` : 'All products';
  }
  const refined = search.renderState[tenant]?.currentRefinements?.items || [];
  drawer.update(refined.reduce((n, item) => n + item.refinements.length, 0), results?.nbHits);
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
});
search.on('error', (e) => console.error('search error', e.error || e));
search.start();

function rememberStore(id) {
  store = id || null;
  try {
    if (store) localStorage.setItem(STORE_KEY, store); else localStorage.removeItem(STORE_KEY);
  } catch { /* storage refused: the choice lasts for this page */ }
}
searchClient.stores(tenant).then(({ stores }) => {
  if (!stores.length) return;
  let saved = null;
  try { saved = localStorage.getItem(STORE_KEY); } catch { /* none */ }
  const picker = $('#store');
  picker.innerHTML = `<option value="">All stores</option>${stores.map((s) => `<option value="${esc(s)}">${esc(s)}</option>`).join('')}`;
  picker.hidden = false;
  if (saved && stores.includes(saved)) {
    picker.value = saved;
    rememberStore(saved);
    search.refresh();
  } else if (saved) {
    rememberStore(null);
  }
  picker.addEventListener('change', (e) => {
    rememberStore(e.target.value);
    search.refresh();
  });
}).catch((e) => console.error('stores', e));

// guided search: a chip answers the question with an ordinary refinement of its attribute (a widget
// without UI holds the refinement when the page shows no list for that attribute)
$('#followup').addEventListener('click', (e) => {
  const chip = e.target.closest('button.chip');
  if (!chip) return;
  const { attribute } = chip.closest('[data-testid=follow-up]').dataset;
  holdList(attribute);
  search.setUiState((state) => {
    const own = state[tenant] || {};
    const lists = own.refinementList || {};
    const values = [...new Set([...(lists[attribute] || []), chip.dataset.value])];
    return { ...state, [tenant]: { ...own, refinementList: { ...lists, [attribute]: values }, page: undefined } };
  });
});

// a hit is a link to its product page; the answer and position it was opened from are kept for the
// product's cart and purchase events (the hits widget sends the click with its position itself)
$('#hits').addEventListener('click', (e) => {
  const el = e.target.closest('[data-testid=hit]');
  if (!el) return;
  const hit = shownHits.get(el.dataset.id);
  clickContext.set(el.dataset.id, { queryID: hit?.__queryID, position: hit?.__position });
});

// ---- product page: details, add to cart and purchase, recommendations ----
function attributed(method, id, price) {
  const ctx = clickContext.get(id);
  const payload = { index: tenant, objectIDs: [id], objectData: [{ quantity: 1, ...(typeof price === 'number' ? { price } : {}) }] };
  if (ctx?.queryID) return aa(`${method}ObjectIDsAfterSearch`, { ...payload, eventName: method, queryID: ctx.queryID, positions: ctx.position ? [ctx.position] : undefined });
  return aa(`${method}ObjectIDs`, { ...payload, eventName: method });
}

async function showProduct(id) {
  const view = $('#product-view');
  view.innerHTML = '<p>Loading...</p>';
  let product;
  try {
    product = await searchClient.item(tenant, id);
  } catch (err) {
    view.innerHTML = `<p class="error">${esc(err.message)}</p>`;
    return;
  }
  const src = photo(id);
  view.innerHTML = `<div class="product" data-testid="product" data-id="${esc(id)}">
      ${src ? `<img src="${src}" alt="${esc(product.title)}" onerror="${NO_PHOTO}">` : ''}
      <div class="info"><p><a href="#/" class="back">&larr; back to results</a></p>
        <div class="brandname">${esc(product.brand)}</div><h1>${esc(product.title)}</h1>
        <p class="price">${money(product.price)}</p>${STOCK_LABELS[product.availability] ? `<p class="stock">${STOCK_LABELS[product.availability]}</p>` : ''}<p>${esc(product.category || '')}</p>
        <p><button class="cart" data-testid="add-to-cart">Add to cart</button><button class="buy" data-testid="buy">Buy now</button>
        <span class="sent" data-testid="event-status"></span></p>
        <p>${esc((product.description || '').slice(0, 400))}</p></div></div>
    <div class="recs">${shop.containers.map(([cid, label]) => `<section data-testid="recs-${cid}" aria-labelledby="recs-${cid}-title"><h2 id="recs-${cid}-title">${esc(label)}</h2><div class="items" aria-busy="true"><p class="empty">Loading...</p></div></section>`).join('')}</div>`;
  const status = view.querySelector('[data-testid=event-status]');
  view.querySelector('.cart').addEventListener('click', async () => {
    cart.add({ id, title: product.title, brand: product.brand, price: product.price }, clickContext.get(id));
    status.innerHTML = 'Added to your cart. <a href="#/cart" data-testid="view-cart">View cart</a>';
    await attributed('addedToCart', id, product.price);
  });
  view.querySelector('.buy').addEventListener('click', async () => {
    const answer = await attributed('purchased', id, product.price);
    status.textContent = answer?.accepted ? 'Purchase sent' : 'Purchase not recorded';
  });
  const shown = location.hash; // a late answer for a page left meanwhile is dropped
  for (const [cid, label] of shop.containers) {
    const box = view.querySelector(`[data-testid=recs-${cid}] .items`);
    const body = { containerId: cid, productIds: [id], visitorId: aa.visitorId(), predictParams: { returnProduct: true } };
    showRecs(box, { searchClient, tenant, body, card, esc, title: label, alive: () => location.hash === shown && box.isConnected });
  }
}

$('#product-view').addEventListener('click', (e) => {
  const el = e.target.closest('[data-testid=rec]');
  if (!el) return; // a link: the page's link handler opens it
  const { id, token: queryID, position } = el.dataset;
  if (queryID) {
    clickContext.set(id, { queryID, position: Number(position) });
    aa('clickedObjectIDsAfterSearch', { eventName: 'Recommendation clicked', index: tenant, queryID, objectIDs: [id], positions: [Number(position)] });
  }
});

// ---- search by photo (POST /images/search) ----
let photoAnswer = null;
$('#photo').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  navigate('#/photo');
  const box = $('#photo-results');
  box.innerHTML = '<p>Looking...</p>';
  try {
    photoAnswer = await searchClient.searchByImage(tenant, file, { size: 24 });
    box.innerHTML = photoAnswer.products.map((p, i) => `<a class="card" href="#/product/${encodeURIComponent(p.id)}" data-testid="photo-hit" data-id="${esc(p.id)}" data-position="${i + 1}">${card(p)}</a>`).join('') || '<p>No similar products.</p>';
  } catch (err) {
    box.innerHTML = `<p class="error">${esc(err.message)}</p>`;
  }
  e.target.value = '';
});
$('#photo-results').addEventListener('click', (e) => {
  const el = e.target.closest('[data-testid=photo-hit]');
  if (!el || !photoAnswer) return;
  const position = Number(el.dataset.position);
  if (photoAnswer.attributionToken) {
    clickContext.set(el.dataset.id, { queryID: photoAnswer.attributionToken, position });
    aa('clickedObjectIDsAfterSearch', { eventName: 'Photo result clicked', index: tenant, queryID: photoAnswer.attributionToken, objectIDs: [el.dataset.id], positions: [position] });
  }
});

// ---- views by the URL's hash: #/ (search), #/photo, #/product/<id> ----
// A view is a history entry of its own (pushState): not `location.hash =`, whose popstate would make
// the router read the URL before it holds the query just typed (it writes 400 ms after a change).
function navigate(hash) {
  if (location.hash === hash) return;
  // the router writes the search state 400 ms after a change: a view opened sooner first records the
  // results being left (else Back from a product opened right after typing showed the query before it)
  const current = new URL(routes.router.createURL(routes.stateMapping.stateToRoute(search.getUiState()))).search;
  if (current !== location.search) history.pushState(null, '', `${location.pathname}${current}${location.hash}`);
  history.pushState(null, '', `${location.pathname}${current}${hash}`);
  route();
}
document.addEventListener('click', (e) => {
  const link = e.target.closest('a[href^="#/"]');
  if (!link || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(link.getAttribute('href'));
});
// typing on another view brings the results back
queryInput.addEventListener('input', () => { if (!/^#?\/?$/.test(location.hash)) navigate('#/'); });
let routed = null; // the hash whose view is shown
function route() {
  if (location.hash === routed) return; // the search state changed, not the view
  routed = location.hash;
  const m = /^#\/product\/(.+)$/.exec(location.hash);
  const inCart = location.hash === '#/cart';
  $('#search-view').hidden = Boolean(m) || inCart || location.hash === '#/photo';
  $('#photo-view').hidden = location.hash !== '#/photo';
  $('#product-view').hidden = !m;
  $('#cart-view').hidden = !inCart;
  if (m) {
    window.scrollTo(0, 0);
    showProduct(decodeURIComponent(m[1]));
  } else if (inCart) {
    window.scrollTo(0, 0);
    cartView.render();
  }
}

// ---- the cart (cart.js): kept in localStorage, its page at #/cart, a simulated checkout ----
const cartView = cartPage($('#cart-view'), cart, { money, photo, esc, send: (lines) => checkout(aa, tenant, lines) });
function showCartCount() {
  const n = cart.count();
  $('#cart .count').textContent = String(n);
  $('#cart').setAttribute('aria-label', `Cart, ${n} item${n === 1 ? '' : 's'}`);
}
cart.onChange(() => {
  showCartCount();
  if (location.hash === '#/cart') cartView.render();
});
showCartCount();
window.addEventListener('hashchange', route);
window.addEventListener('popstate', route); // back to an entry navigate() pushed: no hashchange
route();
