// Highlighting of hits (InstantSearch's `_highlightResult`), computed here: Aisle answers products
// without match positions, so the words of the query are marked in the hit's text attributes.

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escape a string (the text around the highlight tags is escaped; the tags are not). */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Lower-case, accents removed: the form words are compared in. */
export function fold(text) {
  return String(text).normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
}

/** The query's words, folded, without empties. */
export function queryWords(query) {
  return fold(query || '').split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/**
 * One attribute's highlight: every word of `value` that starts with a query word is wrapped in
 * `preTag`/`postTag`. Returns InstantSearch's shape `{value, matchLevel, matchedWords,
 * fullyHighlighted}`; `matchLevel` is "full" when every query word matched, "partial" when some did,
 * "none" otherwise. The text is HTML-escaped unless `escape` is false.
 * @param {unknown} value
 * @param {string[]} words
 * @param {{preTag?: string, postTag?: string, escape?: boolean}} [options]
 */
export function highlightValue(value, words, { preTag, postTag, escape = false } = {}) {
  const text = String(value ?? '');
  const pieces = text.split(/([\p{L}\p{N}]+)/u);
  const matched = new Set();
  let out = '';
  let marked = 0;
  let wordCount = 0;
  for (const piece of pieces) {
    if (!piece) continue;
    const isWord = /^[\p{L}\p{N}]+$/u.test(piece);
    const shown = escape ? escapeHtml(piece) : piece;
    if (!isWord) {
      out += shown;
      continue;
    }
    wordCount += 1;
    const folded = fold(piece);
    const hit = words.find((w) => folded.startsWith(w));
    if (hit) {
      matched.add(hit);
      marked += 1;
      out += `${preTag}${shown}${postTag}`;
    } else {
      out += shown;
    }
  }
  const matchLevel = matched.size === 0 ? 'none' : matched.size === words.length ? 'full' : 'partial';
  return {
    value: out,
    matchLevel,
    matchedWords: [...matched],
    fullyHighlighted: wordCount > 0 && marked === wordCount,
  };
}

/** `_highlightResult` of a hit: every string attribute (and strings in arrays) highlighted. */
export function highlightHit(hit, query, tags) {
  const words = queryWords(query);
  const result = {};
  for (const [key, value] of Object.entries(hit)) {
    if (key.startsWith('_') || key === 'objectID') continue;
    if (typeof value === 'string') {
      result[key] = highlightValue(value, words, tags);
    } else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      result[key] = value.map((v) => highlightValue(v, words, tags));
    }
  }
  return result;
}
