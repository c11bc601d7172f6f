// The shopper's cart, kept in localStorage per tenant (a reload, another tab and a later visit see
// it), and its page (#/cart): quantities, line and order totals, and a simulated checkout that sends
// one purchase event per line (POST /shop/events through the insights client: the line's price and
// quantity, and the answer and position it was found at, when it came from a search).

const MAX_QUANTITY = 99;
const EVENTS_PER_REQUEST = 50; // POST /shop/events takes at most 50 events

/** The cart of `tenant`: `{lines(), count(), total(), add, setQuantity, remove, clear, onChange}`. */
export function createCart(tenant, storage = globalThis.localStorage) {
  const key = `aisle_cart:${tenant}`;
  const listeners = new Set();
  let lines = read();

  function read() {
    try {
      const stored = JSON.parse(storage.getItem(key) || '[]');
      return Array.isArray(stored) ? stored.filter((l) => l && typeof l.id === 'string' && l.quantity > 0) : [];
    } catch {
      return [];
    }
  }

  function changed() {
    try {
      storage.setItem(key, JSON.stringify(lines));
    } catch { /* storage refused: the cart lasts for this page */ }
    for (const listener of listeners) listener();
  }

  // another tab changed it
  globalThis.addEventListener?.('storage', (e) => {
    if (e.key !== key) return;
    lines = read();
    for (const listener of listeners) listener();
  });

  const clamp = (q) => Math.min(Math.max(Math.round(Number(q) || 0), 0), MAX_QUANTITY);

  return {
    lines: () => lines.map((l) => ({ ...l })),
    count: () => lines.reduce((n, l) => n + l.quantity, 0),
    total: () => lines.reduce((sum, l) => sum + (typeof l.price === 'number' ? l.price * l.quantity : 0), 0),
    /** One more of `product` ({id, title, brand, price}); `found`: {queryID, position} of its search. */
    add(product, found = {}) {
      const line = lines.find((l) => l.id === product.id);
      if (line) {
        line.quantity = clamp(line.quantity + 1) || 1;
        if (found.queryID) Object.assign(line, { queryID: found.queryID, position: found.position });
      } else {
        lines.push({
          id: product.id, title: product.title ?? product.id, brand: product.brand ?? '', price: product.price,
          quantity: 1, ...(found.queryID ? { queryID: found.queryID, position: found.position } : {}),
        });
      }
      changed();
    },
    setQuantity(id, quantity) {
      const q = clamp(quantity);
      lines = q ? lines.map((l) => (l.id === id ? { ...l, quantity: q } : l)) : lines.filter((l) => l.id !== id);
      changed();
    },
    remove(id) {
      lines = lines.filter((l) => l.id !== id);
      changed();
    },
    clear() {
      lines = [];
      changed();
    },
    onChange(listener) {
      listeners.add(listener);
    },
  };
}

/**
 * Send the purchase of every line: one event per line, the lines of one search answer together
 * (`aa`: the insights client). Resolves to the number of events the service accepted.
 */
export async function checkout(aa, tenant, lines) {
  const groups = new Map();
  for (const line of lines) {
    const group = groups.get(line.queryID || '') || [];
    group.push(line);
    groups.set(line.queryID || '', group);
  }
  const calls = [];
  for (const [queryID, group] of groups) {
    for (let i = 0; i < group.length; i += EVENTS_PER_REQUEST) {
      const part = group.slice(i, i + EVENTS_PER_REQUEST);
      const payload = {
        eventName: 'Checkout',
        index: tenant,
        objectIDs: part.map((l) => l.id),
        objectData: part.map((l) => ({ quantity: l.quantity, ...(typeof l.price === 'number' ? { price: l.price } : {}) })),
      };
      calls.push(queryID
        ? aa('purchasedObjectIDsAfterSearch', { ...payload, queryID, positions: part.map((l) => l.position || undefined) })
        : aa('purchasedObjectIDs', payload));
    }
  }
  const answers = await Promise.all(calls);
  return answers.reduce((n, a) => n + (a?.accepted || 0), 0);
}

/**
 * The cart page in `view`: `{render()}`. `shop`: `{money, photo, esc}`; `send(lines)`: the checkout's
 * events, resolving to the number accepted.
 */
export function cartPage(view, cart, { money, photo, esc, send }) {
  let placed = null; // the order just placed: {count, total, sent}, shown until the cart changes

  function lineHtml(l) {
    const src = photo(l.id);
    const name = esc(l.title);
    const link = `#/product/${encodeURIComponent(l.id)}`;
    return `<li class="cart-line" data-testid="cart-line" data-id="${esc(l.id)}">
      <a class="thumb" href="${link}" tabindex="-1" aria-hidden="true">${src ? `<img src="${src}" alt="${name}" loading="lazy">` : '<span class="nophoto">no photo</span>'}</a>
      <div class="what"><a href="${link}">${name}</a>${l.brand ? `<div class="brandname">${esc(l.brand)}</div>` : ''}
        <div class="unit">${money(l.price)} each</div></div>
      <div class="qty" role="group" aria-label="Quantity of ${name}">
        <button type="button" data-act="dec" aria-label="One less ${name}">&minus;</button>
        <input type="number" inputmode="numeric" min="1" max="99" value="${l.quantity}" aria-label="Quantity of ${name}" data-testid="quantity">
        <button type="button" data-act="inc" aria-label="One more ${name}">+</button>
      </div>
      <div class="line-total" data-testid="line-total">${money(typeof l.price === 'number' ? l.price * l.quantity : undefined)}</div>
      <button type="button" class="remove" data-act="remove" aria-label="Remove ${name}">Remove</button>
    </li>`;
  }

  function render() {
    const lines = cart.lines();
    if (placed && !lines.length) {
      view.innerHTML = `<section class="cart-page" data-testid="order-placed"><h1 tabindex="-1">Thank you!</h1>
        <p>Your order of ${placed.count} item${placed.count === 1 ? '' : 's'}, ${money(placed.total)}, is placed.</p>
        <p class="note">A simulated checkout: nothing is paid or shipped. ${placed.sent} purchase event${placed.sent === 1 ? '' : 's'} went to analytics, one per line.</p>
        <p><a href="#/" class="button">Continue shopping</a></p></section>`;
      return;
    }
    placed = null;
    if (!lines.length) {
      view.innerHTML = `<section class="cart-page"><h1 tabindex="-1">Your cart</h1><p data-testid="cart-empty">Your cart is empty.</p>
        <p><a href="#/" class="button">Continue shopping</a></p></section>`;
      return;
    }
    const count = cart.count();
    view.innerHTML = `<section class="cart-page"><h1 tabindex="-1">Your cart</h1>
      <ul class="cart-lines" data-testid="cart-lines">${lines.map(lineHtml).join('')}</ul>
      <div class="cart-summary"><p>Total (${count} item${count === 1 ? '' : 's'}): <strong data-testid="cart-total">${money(cart.total())}</strong></p>
        <p><button type="button" class="checkout" data-testid="checkout">Check out</button> <a href="#/">Continue shopping</a></p>
        <p class="note">A simulated checkout: nothing is paid or shipped; each line is sent to analytics as a purchase.</p>
        <p class="error" data-testid="checkout-error" role="alert" hidden></p></div></section>`;
  }

  view.addEventListener('click', async (e) => {
    const button = e.target.closest('button');
    if (!button) return;
    if (button.dataset.testid === 'checkout') {
      const lines = cart.lines();
      button.disabled = true;
      button.textContent = 'Placing the order...';
      try {
        const sent = await send(lines);
        placed = { count: cart.count(), total: cart.total(), sent };
        cart.clear(); // renders the thank-you page
        view.querySelector('h1')?.focus();
      } catch (err) {
        const shown = view.querySelector('[data-testid=checkout-error]');
        shown.textContent = `The order could not be placed: ${err.message}. Your cart is kept; try again.`;
        shown.hidden = false;
        button.disabled = false;
        button.textContent = 'Check out';
      }
      return;
    }
    const line = button.closest('[data-testid=cart-line]');
    if (!line) return;
    const { id } = line.dataset;
    const current = cart.lines().find((l) => l.id === id)?.quantity || 0;
    if (button.dataset.act === 'inc') cart.setQuantity(id, current + 1);
    else if (button.dataset.act === 'dec') cart.setQuantity(id, Math.max(current - 1, 1));
    else if (button.dataset.act === 'remove') cart.remove(id);
    // keep the focus on the control pressed (the page was drawn again)
    const again = view.querySelector(`[data-testid=cart-line][data-id="${CSS.escape(id)}"] [data-act="${button.dataset.act}"]`);
    (again || view.querySelector('h1'))?.focus();
  });
  view.addEventListener('change', (e) => {
    const input = e.target.closest('input[data-testid=quantity]');
    if (!input) return;
    const { id } = input.closest('[data-testid=cart-line]').dataset;
    cart.setQuantity(id, Math.max(Number(input.value) || 1, 1));
  });

  return { render };
}
