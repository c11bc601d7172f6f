// The filters as a drawer at phone width: the facets no longer push the first product below the first
// screen; a Filters button (with the number of refinements) opens them over the page, as a modal dialog
// (focus inside, Tab kept in it, Escape, the backdrop or "Show results" closes it, focus back on the
// button). From 700 px up the filters are the sidebar and the button is not shown.

const PHONE = '(max-width: 700px)';
const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** Wire the drawer; returns `{open, close, update(refinements, results)}`. */
export function filtersDrawer({ toggle, drawer, backdrop }) {
  const phone = matchMedia(PHONE);
  const visible = (el) => el.offsetParent !== null || el === document.activeElement;

  function open() {
    drawer.classList.add('open');
    drawer.setAttribute('role', 'dialog');
    drawer.setAttribute('aria-modal', 'true');
    backdrop.hidden = false;
    toggle.setAttribute('aria-expanded', 'true');
    document.body.classList.add('drawer-open');
    drawer.querySelector('.drawer-close').focus();
  }

  function close({ refocus = true } = {}) {
    if (!drawer.classList.contains('open')) return;
    drawer.classList.remove('open');
    drawer.removeAttribute('role');
    drawer.removeAttribute('aria-modal');
    backdrop.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    document.body.classList.remove('drawer-open');
    if (refocus) toggle.focus();
  }

  toggle.addEventListener('click', () => (drawer.classList.contains('open') ? close() : open()));
  backdrop.addEventListener('click', () => close());
  drawer.querySelector('.drawer-close').addEventListener('click', () => close());
  drawer.querySelector('.drawer-done').addEventListener('click', () => close());
  drawer.addEventListener('keydown', (e) => {
    if (!drawer.classList.contains('open')) return;
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    } else if (e.key === 'Tab') { // keep the focus in the dialog
      const items = [...drawer.querySelectorAll(FOCUSABLE)].filter(visible);
      if (!items.length) return;
      const [first, last] = [items[0], items[items.length - 1]];
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  });
  phone.addEventListener('change', () => close({ refocus: false }));

  return {
    open,
    close,
    /** The number of refinements (on the button) and of results (on "Show results"). */
    update(refinements, results) {
      toggle.querySelector('.count').textContent = refinements ? ` (${refinements})` : '';
      toggle.setAttribute('aria-label', refinements ? `Filters, ${refinements} applied` : 'Filters');
      const done = drawer.querySelector('.drawer-done');
      done.textContent = typeof results === 'number' ? `Show ${results.toLocaleString('en')} result${results === 1 ? '' : 's'}` : 'Show results';
    },
  };
}
