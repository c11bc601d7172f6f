// The search box and its suggestions as an ARIA combobox (WAI-ARIA APG, "combobox with listbox
// popup"): the input is the combobox (aria-expanded, aria-controls, aria-activedescendant), the
// suggestions a listbox of options. Typing searches as you type and opens the list; ArrowDown and
// ArrowUp move through it (the input keeps the focus), Enter takes the option shown as active (or
// closes the list: the results are already those of what was typed), Escape closes it, and a second
// Escape clears the box. A mouse pick works too.
//
// Two connectors: connectSearchBox for the query (in the URL with the rest of the state), connectHits
// on the suggestions index for the options.

import { connectHits, connectSearchBox } from 'instantsearch.js/es/connectors';
import { fold, highlightValue } from '../src/highlight.js';

const words = (q) => fold(q || '').split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/**
 * `{searchBox, suggestions}`: the two widgets, for `input` (the combobox) and `list` (its listbox).
 * `esc`; `onPick(query)`: after a suggestion is taken (the page shows the results).
 */
export function searchCombobox({ input, list, clear, esc, onPick = () => {} }) {
  let refine = () => {};
  let options = []; // the suggestions' queries, in order
  let active = -1;
  let typing = false; // the shopper typed since the box got the focus: new suggestions may open the list

  function setActive(i) {
    active = i;
    list.querySelectorAll('[role=option]').forEach((el, k) => el.setAttribute('aria-selected', String(k === i)));
    if (i >= 0) {
      const el = list.querySelector(`#${input.id}-option-${i}`);
      input.setAttribute('aria-activedescendant', el.id);
      el.scrollIntoView({ block: 'nearest' });
    } else {
      input.removeAttribute('aria-activedescendant');
    }
  }

  function open(show) {
    if (!show) typing = false;
    const visible = show && options.length > 0;
    list.hidden = !visible;
    input.setAttribute('aria-expanded', String(visible));
    if (!visible) setActive(-1);
  }

  function pick(query) {
    input.value = query;
    clear.hidden = !query;
    refine(query);
    open(false);
    onPick(query);
  }

  input.addEventListener('input', () => {
    clear.hidden = !input.value;
    typing = true;
    refine(input.value);
    open(true);
  });
  input.addEventListener('keydown', (e) => {
    const expanded = !list.hidden;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (!options.length) return;
      e.preventDefault();
      if (!expanded) {
        typing = true;
        open(true);
        setActive(e.key === 'ArrowDown' ? 0 : options.length - 1);
        return;
      }
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive(active < 0 ? (step > 0 ? 0 : options.length - 1) : (active + step + options.length) % options.length);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (expanded && active >= 0) pick(options[active]);
      else {
        open(false);
        onPick(input.value);
      }
    } else if (e.key === 'Escape') {
      if (expanded) {
        e.preventDefault();
        open(false);
      } else if (input.value) {
        e.preventDefault();
        pick('');
      }
    } else if (e.key === 'Tab') {
      open(false);
    }
  });
  input.addEventListener('blur', () => open(false));
  list.addEventListener('mousedown', (e) => e.preventDefault()); // the input keeps the focus
  list.addEventListener('click', (e) => {
    const option = e.target.closest('[role=option]');
    if (option) pick(option.dataset.query);
  });
  clear.addEventListener('click', () => {
    pick('');
    input.focus();
  });

  const searchBox = connectSearchBox(({ query, refine: r }, isFirstRender) => {
    refine = r;
    // the state's query, unless the shopper is typing (the box is ahead of the state then)
    if (isFirstRender || document.activeElement !== input) {
      input.value = query;
      clear.hidden = !query;
    }
  })({});

  const suggestions = connectHits(({ hits, results }) => {
    const typed = results?.query ?? '';
    options = hits.map((h) => h.query);
    list.innerHTML = hits
      .map((h, i) => `<li role="option" id="${input.id}-option-${i}" aria-selected="false" data-query="${esc(h.query)}">${highlightValue(h.query, words(typed), { preTag: '<mark>', postTag: '</mark>', escape: true }).value}<small>${esc(h.type)}</small></li>`)
      .join('');
    setActive(-1);
    open(typing && document.activeElement === input);
  })({});

  return { searchBox, suggestions, close: () => open(false) };
}
