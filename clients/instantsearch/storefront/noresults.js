// The page for an answer with no product: "No results for “qwrtzp”", what to search instead, a way
// back; the facets, count, sort and pagination of an empty answer (a price range of 0 to 0) are hidden.
//
// What to search instead, in order: the engine's corrected query; the suggestions endpoint's
// alternatives for the query's words (GET /suggestions of each word of 3 letters or more, and of the
// query without its last word: each suggestion returns results when searched); else the shop's biggest
// categories and brands (the counts of a browse of the whole catalog), or, for a shop without facets,
// its example searches.

const MAX_IDEAS = 6;

/**
 * A widget rendering the no-results page into `container` and marking `document.body` with
 * `no-results` while it shows. `searchClient`: the adapter's (suggest, search); `tenant`, `shop` (the
 * TENANTS entry: facets, examples); `esc`.
 */
export function noResultsWidget({ container, searchClient, tenant, shop, esc }) {
  const alternatives = new Map(); // query -> Promise of suggestion texts
  let browse = null; // Promise of {categories, brands}
  let instance = null;
  let shown = null; // {query, refined} of the page shown
  let generation = 0; // a late list of ideas is dropped when the page changed meanwhile

  function alternativesOf(query) {
    if (!alternatives.has(query)) {
      const words = query.split(/\s+/).filter((w) => w.length >= 3);
      const asked = new Set(words.length > 1 ? words : []);
      if (words.length > 1) asked.add(words.slice(0, -1).join(' '));
      const pending = Promise.all(
        [...asked].map((q) => searchClient.suggest(tenant, q, 4).catch(() => [])),
      ).then((lists) => {
        const seen = new Set([query.toLowerCase()]);
        const found = [];
        // short ones first (a query, brand or category before a product's long name)
        const ranked = lists.flat().sort((a, b) => (a.type === 'product') - (b.type === 'product'));
        for (const { suggestion } of ranked) {
          const key = suggestion.toLowerCase();
          if (seen.has(key)) continue;
          seen.add(key);
          found.push(suggestion);
        }
        return found.slice(0, MAX_IDEAS);
      });
      alternatives.set(query, pending);
    }
    return alternatives.get(query);
  }

  function browseIdeas() {
    if (!browse) {
      const facets = [shop.facets.includes('category') && 'category.lvl0', shop.facets.includes('brand') && 'brand'].filter(Boolean);
      browse = facets.length
        ? searchClient
          .search([{ indexName: tenant, params: { query: '', hitsPerPage: 0, facets, analytics: false } }])
          .then(({ results: [r] }) => ({
            categories: Object.entries(r.facets['category.lvl0'] || {}).sort((a, b) => b[1] - a[1]).slice(0, MAX_IDEAS).map(([v]) => v),
            brands: Object.entries(r.facets.brand || {}).sort((a, b) => b[1] - a[1]).slice(0, MAX_IDEAS).map(([v]) => v),
          }))
          .catch(() => ({ categories: [], brands: [] }))
        : Promise.resolve({ categories: [], brands: [] });
    }
    return browse;
  }

  const chip = (attr, value) => `<button type="button" class="chip" ${attr}="${esc(value)}">${esc(value)}</button>`;

  async function fill(results, refined, at) {
    const query = results.query.trim();
    const parts = [];
    if (results.correctedQuery) parts.push(`<p>Did you mean ${chip('data-query', results.correctedQuery)}?</p>`);
    const found = query ? await alternativesOf(query) : [];
    if (found.length) parts.push(`<h2>Try one of these</h2><p class="chips" data-testid="alternatives">${found.map((q) => chip('data-query', q)).join(' ')}</p>`);
    if (!found.length && !refined) {
      const { categories, brands } = await browseIdeas();
      if (categories.length) parts.push(`<h2>Browse a category</h2><p class="chips" data-testid="popular">${categories.map((c) => chip('data-category', c)).join(' ')}</p>`);
      if (brands.length) parts.push(`<h2>Popular brands</h2><p class="chips" data-testid="popular-brands">${brands.map((b) => chip('data-brand', b)).join(' ')}</p>`);
      if (!categories.length && shop.examples?.length) {
        parts.push(`<h2>Popular searches</h2><p class="chips" data-testid="popular">${shop.examples.map((q) => chip('data-query', q)).join(' ')}</p>`);
      }
    }
    const ideas = container.querySelector('.ideas');
    if (at === generation && ideas) ideas.innerHTML = parts.join('');
  }

  function go(state) {
    instance.setUiState((ui) => ({ ...ui, [tenant]: state }));
    window.scrollTo(0, 0);
  }

  container.addEventListener('click', (e) => {
    const el = e.target.closest('button');
    if (!el || !instance) return;
    const own = instance.getUiState()[tenant] || {};
    if (el.dataset.query !== undefined) go({ query: el.dataset.query });
    else if (el.dataset.category !== undefined) go({ hierarchicalMenu: { 'category.lvl0': [el.dataset.category] } });
    else if (el.dataset.brand !== undefined) go({ refinementList: { brand: [el.dataset.brand] } });
    else if (el.dataset.action === 'clear-filters') go({ query: own.query, sortBy: own.sortBy });
    else if (el.dataset.action === 'browse') go({});
  });

  return {
    $$type: 'aisle.noResults',
    $$widgetType: 'aisle.noResults',
    init({ instantSearchInstance }) {
      instance = instantSearchInstance;
    },
    render({ results, state }) {
      if (!results) return;
      const refined = Boolean(state.facetsRefinements && Object.values(state.facetsRefinements).some((v) => v.length))
        || Object.values(state.disjunctiveFacetsRefinements || {}).some((v) => v.length)
        || Object.values(state.hierarchicalFacetsRefinements || {}).some((v) => v.length)
        || Object.values(state.numericRefinements || {}).some((ops) => Object.values(ops).some((v) => v.length));
      const empty = results.nbHits === 0;
      document.body.classList.toggle('no-results', empty);
      container.hidden = !empty;
      if (!empty) {
        if (shown) container.innerHTML = '';
        shown = null;
        generation += 1;
        return;
      }
      if (shown && shown.query === results.query && shown.refined === refined) return;
      shown = { query: results.query, refined };
      generation += 1;
      const query = results.query.trim();
      const filters = (instance.renderState[tenant]?.currentRefinements?.items || [])
        .flatMap((item) => item.refinements.map((r) => `${item.label}: ${r.label}`));
      container.innerHTML = `<h1 data-testid="no-results-title">${query ? `No results for “${esc(query)}”` : 'No results'}${refined ? ' with these filters' : ''}</h1>
        ${refined && filters.length ? `<p class="filters-named" data-testid="no-results-filters">${filters.map((f) => `<span class="uchip">${esc(f)}</span>`).join(' ')}</p>` : ''}
        <p>${refined ? 'Remove a filter or two, or search for something else.' : 'Check the spelling, use fewer or other words, or try one of these.'}</p>
        <div class="ideas" aria-live="polite"></div>
        <p class="ways-back">${refined ? '<button type="button" class="primary" data-action="clear-filters" data-testid="clear-filters">Remove the filters</button> ' : ''}<button type="button" class="${refined ? 'secondary' : 'primary'}" data-action="browse" data-testid="browse-all">Show all products</button></p>`;
      fill(results, refined, generation);
    },
    dispose() {
      container.innerHTML = '';
      document.body.classList.remove('no-results');
    },
  };
}
