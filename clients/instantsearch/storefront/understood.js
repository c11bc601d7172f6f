// What query understanding made of the words typed, as chips above the hits: "red shirt" on fashion is
// colour Red and category Shirts, "watch under 2000" category Watches and a price up to 2,000 (the
// answer's queryGraph: `attributes` and `price`). They are filters only when the strict stage answered
// (every word matched); a looser stage ranks by them instead, and then no chip claims a filter.
//
// Each chip has a remove button: the next search sends the attribute in `ignoreUnderstood` (a search
// parameter the adapter passes on), so the words are searched as words ("red" in a title) instead of as
// the colour filter. What was set aside holds until the query changes, and is in the URL
// (`&ignore=price`, routing.js) so a reload or a shared link keeps it.

const LABELS = { color: 'Colour', colour: 'Colour', category: 'Category', article_type: 'Type', brand: 'Brand', gender: 'For', usage: 'Use', season: 'Season', price: 'Price' };

const label = (field) => LABELS[field] || field.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
const leaf = (value) => String(value).split(' > ').pop();

/**
 * The chips of an answer's queryGraph: `[{field, label, value, words}]`, one per value shown (a type
 * that repeats the category's name is left out). `money(n)` writes a price. Empty unless the strict
 * stage answered.
 */
export function understoodChips(graph, money) {
  if (!graph || graph.stage !== 'strict') return [];
  const chips = [];
  const seen = new Set();
  for (const { field, values, text } of graph.attributes || []) {
    const value = [...new Set((values || []).map(leaf))].join(' or ');
    const key = value.toLowerCase();
    if (!value || seen.has(key)) continue;
    seen.add(key);
    chips.push({ field, label: label(field), value, words: text || '' });
  }
  const price = graph.price;
  if (price && (price.lte !== undefined || price.gte !== undefined)) {
    let value;
    if (price.lte !== undefined && price.gte !== undefined) value = `${money(price.gte)} to ${money(price.lte)}`;
    else if (price.lte !== undefined) value = `up to ${money(price.lte)}`;
    else value = `from ${money(price.gte)}`;
    chips.push({ field: 'price', label: label('price'), value, words: '' });
  }
  return chips;
}

/** A widget rendering the chips of the main answer into `container`, each removable. */
export function understoodWidget({ container, money, esc }) {
  let helper = null;
  let query = null;
  const onClick = (e) => {
    const button = e.target.closest('button[data-remove]');
    if (!button || !helper) return;
    const aside = [...(helper.state.ignoreUnderstood || []), button.dataset.remove];
    helper.setQueryParameter('ignoreUnderstood', [...new Set(aside)]).search();
  };
  return {
    $$type: 'aisle.understood',
    $$widgetType: 'aisle.understood',
    init(options) {
      helper = options.helper;
      query = helper.state.query || '';
      // a new query reads afresh: what the shopper set aside for the last one no longer holds
      helper.on('change', ({ state }) => {
        if ((state.query || '') !== query) {
          query = state.query || '';
          if (state.ignoreUnderstood && state.ignoreUnderstood.length) helper.setQueryParameter('ignoreUnderstood', undefined);
        }
      });
      container.addEventListener('click', onClick);
    },
    // the set-aside attributes as part of the UI state, so routing writes them to the URL and reads them back
    getWidgetUiState(uiState, { searchParameters }) {
      const aside = searchParameters.ignoreUnderstood;
      return aside && aside.length ? { ...uiState, ignoreUnderstood: [...aside] } : uiState;
    },
    getWidgetSearchParameters(searchParameters, { uiState }) {
      const aside = uiState.ignoreUnderstood;
      return searchParameters.setQueryParameter('ignoreUnderstood', aside && aside.length ? [...aside] : undefined);
    },
    render({ results }) {
      const chips = understoodChips(results?.queryGraph, money);
      container.hidden = !chips.length;
      container.innerHTML = chips.length
        ? `<span class="lead">Your search reads as</span> ${chips
            .map(
              (c) =>
                `<span class="uchip" data-field="${esc(c.field)}"${c.words ? ` title="from '${esc(c.words)}'"` : ''}>${esc(c.label)}: <b>${esc(c.value)}</b>` +
                ` <button type="button" class="uchip-remove" data-remove="${esc(c.field)}" aria-label="Do not filter by ${esc(c.label)}: ${esc(c.value)}">×</button></span>`,
            )
            .join(' ')}`
        : '';
    },
    dispose() {
      container.removeEventListener('click', onClick);
      container.innerHTML = '';
    },
  };
}
