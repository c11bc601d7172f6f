// Recommendations on the product page (POST /recommendations): a horizontal carousel per container
// (a row that scrolls, with back and forward buttons, not a grid of twenty cards), good/better/best as
// three tiers in order, and words a shopper can read while a model is still being built (never the
// service's message, "model 'similar-items' is being trained in the background...").

const TIERS = [
  ['good', 'Good', 'The best value'],
  ['better', 'Better', 'A step up'],
  ['best', 'Best', 'Top of the range'],
];
const RETRIES = 3; // a model being trained: asked again after its Retry-After, this many times
const MAX_WAIT_S = 30;

/** The shopper's words for a failed recommendation request (an AisleError). */
export function recsProblem(err) {
  if (err?.code === 'model_training' || err?.status === 503) {
    return { building: true, text: 'We are preparing these recommendations. They will appear here in a moment.' };
  }
  return { building: false, text: 'No recommendations to show right now.' };
}

/**
 * One container's section content: tiers when the answer labels its items good/better/best, else a
 * carousel. `card(item, extra)`: a product card's inner HTML; `esc`; `title`: the section's name.
 */
export function recsHtml(answer, { card, esc, title }) {
  const items = answer.response_data || [];
  const token = esc(answer.attributionToken || '');
  if (!items.length) return '<p class="empty">Nothing to recommend for this product yet.</p>';
  const cardOf = (p, position, extra = '') => `<a class="card" href="#/product/${encodeURIComponent(p.id)}" data-testid="rec" data-id="${esc(p.id)}" data-token="${token}" data-position="${position}">${card(p, extra)}</a>`;
  const labelled = items.map((p, i) => ({ p, i })).filter(({ p }) => TIERS.some(([key]) => key === p.label));
  if (labelled.length) {
    const tiers = TIERS.map(([key, name, note]) => [key, name, note, labelled.find(({ p }) => p.label === key)]).filter((t) => t[3]);
    return `<ol class="tiers" data-testid="tiers">${tiers
      .map(([key, name, note, { p, i }]) => `<li class="tier tier-${key}" data-testid="tier" data-tier="${key}"><div class="tier-name"><strong>${name}</strong> <span>${note}</span></div>${cardOf(p, i + 1)}</li>`)
      .join('')}</ol>`;
  }
  return `<div class="carousel" data-testid="carousel">
    <button type="button" class="scroll prev" aria-label="Back through ${esc(title)}" hidden>&lsaquo;</button>
    <ul class="track" role="list" aria-label="${esc(title)}">${items.map((p, i) => `<li>${cardOf(p, i + 1)}</li>`).join('')}</ul>
    <button type="button" class="scroll next" aria-label="More ${esc(title)}" hidden>&rsaquo;</button></div>`;
}

/** Wire a carousel's buttons: shown only when the row scrolls, each scrolls by most of a screen. */
export function wireCarousel(root) {
  const track = root.querySelector('.track');
  if (!track) return;
  const prev = root.querySelector('.prev');
  const next = root.querySelector('.next');
  const update = () => {
    prev.hidden = track.scrollLeft <= 8; // scroll snapping may rest a few pixels in
    next.hidden = track.scrollLeft + track.clientWidth >= track.scrollWidth - 8;
  };
  const step = (dir) => track.scrollBy({ left: dir * Math.max(track.clientWidth * 0.8, 160), behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  prev.addEventListener('click', () => step(-1));
  next.addEventListener('click', () => step(1));
  track.addEventListener('scroll', update, { passive: true });
  new ResizeObserver(update).observe(track);
  update();
}

/**
 * Fill `box` with `containerId`'s recommendations for `productId`; while the model is being built the
 * box says so and asks again after the service's Retry-After (at most RETRIES times, while `alive()`).
 */
export async function showRecs(box, { searchClient, tenant, body, card, esc, title, alive }) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const answer = await searchClient.recommend(tenant, body);
      if (!alive()) return;
      box.innerHTML = recsHtml(answer, { card, esc, title });
      box.removeAttribute('aria-busy');
      const carousel = box.querySelector('.carousel');
      if (carousel) wireCarousel(carousel);
      return;
    } catch (err) {
      if (!alive()) return;
      const problem = recsProblem(err);
      box.innerHTML = `<p class="empty${problem.building ? ' building' : ''}" data-testid="recs-placeholder">${problem.text}</p>`;
      if (!problem.building || attempt >= RETRIES) {
        box.removeAttribute('aria-busy');
        return;
      }
      const wait = Math.min(Number(err.retryAfter) || 10, MAX_WAIT_S);
      await new Promise((resolve) => { setTimeout(resolve, wait * 1000); });
      if (!alive()) return;
    }
  }
}
