// Aisle console: the few behaviours htmx does not cover (rows in editors, drag to pin).
"use strict";
const Console = {
  // Clone the last row of the block the button belongs to, emptied.
  addRow(button) {
    const rows = button.closest(".action").querySelector(".rows");
    const last = rows.lastElementChild;
    const row = last.cloneNode(true);
    row.querySelectorAll("input").forEach((i) => { i.value = ""; });
    row.querySelectorAll("select").forEach((s) => { s.selectedIndex = 0; });
    row.querySelectorAll(".picks").forEach((l) => l.remove());
    row.querySelectorAll(".picked").forEach((t) => { t.textContent = ""; });
    rows.appendChild(row);
    return row;
  },
  removeRow(button) {
    const rows = button.closest(".rows");
    if (rows.children.length > 1) button.closest(".clause").remove();
    else button.closest(".clause").querySelectorAll("input").forEach((i) => { i.value = ""; });
  },
  addSlot() {
    const body = document.querySelector("#slots tbody");
    const row = body.lastElementChild.cloneNode(true);
    row.querySelectorAll("input[type=text]").forEach((i) => { i.value = ""; });
    row.querySelectorAll(".err").forEach((e) => e.remove());
    row.classList.remove("has-err");
    body.appendChild(row);
    return row;
  },
  removeSlot(button) {
    const body = button.closest("tbody");
    if (body.children.length > 1) button.closest("tr").remove();
  },
  // Pin `productId` at `position` in the editor's pin action (created when missing), then re-preview.
  async pin(productId, position) {
    let block = document.querySelector('#actions .action[data-action-type="pin"]');
    if (!block) {
      const tenant = document.body.dataset.tenant;
      await htmx.ajax("GET", `/console/${tenant}/fragments/action?kind=pin`, { target: "#actions", swap: "beforeend" });
      block = document.querySelector('#actions .action[data-action-type="pin"]');
    }
    const rows = [...block.querySelectorAll(".pin-row")];
    // one product per position and one position per product: drop the rows in the way
    rows.forEach((r) => {
      const [pid, pos] = r.querySelectorAll("input");
      if ((pid.value === productId || pos.value === String(position)) && rows.length > 1) r.remove();
    });
    let row = [...block.querySelectorAll(".pin-row")].find((r) => !r.querySelector("input").value);
    if (!row) {
      const first = block.querySelector(".pin-row");
      const [pid, pos] = first.querySelectorAll("input");
      row = (pid.value === productId || pos.value === String(position)) ? first : Console.addRow(first);
    }
    const [pid, pos] = row.querySelectorAll("input");
    pid.value = productId;
    pos.value = String(position);
    htmx.trigger("#preview-form", "submit");
  },
};
window.Console = Console;

document.addEventListener("dragstart", (e) => {
  const card = e.target.closest && e.target.closest(".drop-zone .pcard");
  if (!card) return;
  e.dataTransfer.setData("text/plain", card.dataset.productId);
  e.dataTransfer.effectAllowed = "move";
});
document.addEventListener("dragover", (e) => {
  const card = e.target.closest && e.target.closest(".drop-zone .pcard");
  if (!card) return;
  e.preventDefault();
  document.querySelectorAll(".drop-over").forEach((c) => c.classList.remove("drop-over"));
  card.classList.add("drop-over");
});
document.addEventListener("drop", (e) => {
  const card = e.target.closest && e.target.closest(".drop-zone .pcard");
  if (!card) return;
  e.preventDefault();
  card.classList.remove("drop-over");
  const productId = e.dataTransfer.getData("text/plain");
  if (productId) Console.pin(productId, Number(card.dataset.position));
});

// The product picker: any input marked data-product-picker searches the tenant's products as the
// merchandiser types (/console/<tenant>/product-picks, titles and photos rendered by the server) and
// fills in the chosen product's id; with data-append-to="<textarea name>" the id is added there as a
// line instead (the hide action's list). Arrow keys move, Enter picks, Escape closes.
const Picker = {
  timer: null,
  url(input, q, exact) {
    const params = new URLSearchParams({ q });
    if (exact) params.set("exact", "1");
    return `/console/${document.body.dataset.tenant}/product-picks?${params}`;
  },
  box(input) {
    let list = input.parentElement.querySelector(".picks");
    if (!list) {
      list = document.createElement("ul");
      list.className = "picks";
      list.setAttribute("role", "listbox");
      list.id = `picks-${Math.random().toString(36).slice(2)}`;
      input.setAttribute("aria-controls", list.id);
      input.after(list);
    }
    return list;
  },
  label(input, title) {
    const shown = input.parentElement.querySelector(".picked");
    if (shown) shown.textContent = title || "";
  },
  close(input) {
    const list = input.parentElement.querySelector(".picks");
    if (list) list.remove();
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  },
  async search(input) {
    const q = input.value.trim();
    if (q.length < 2) { Picker.close(input); return; }
    const resp = await fetch(Picker.url(input, q, false), { credentials: "same-origin" });
    if (!resp.ok || input.value.trim() !== q) return;  // a newer keystroke owns the list
    const list = Picker.box(input);
    list.innerHTML = await resp.text();
    input.setAttribute("aria-expanded", "true");
  },
  move(input, step) {
    const options = [...Picker.box(input).querySelectorAll("li[role=option]")];
    if (!options.length) return;
    const at = options.findIndex((o) => o.getAttribute("aria-selected") === "true");
    const next = options[(at + step + options.length) % options.length];
    options.forEach((o) => o.setAttribute("aria-selected", String(o === next)));
    input.setAttribute("aria-activedescendant", next.id);
    next.scrollIntoView({ block: "nearest" });
  },
  pick(input, option) {
    const id = option.dataset.id;
    const target = input.dataset.appendTo && input.form && input.form.elements[input.dataset.appendTo];
    if (target) {
      const ids = target.value.split("\n").map((s) => s.trim()).filter(Boolean);
      if (!ids.includes(id)) target.value = [...ids, id].join("\n");
      input.value = "";
      target.dispatchEvent(new Event("change", { bubbles: true }));
    } else {
      input.value = id;
      Picker.label(input, option.dataset.title);
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }
    Picker.close(input);
    // a rule editor whose preview is showing follows the pick, as it follows a drag
    if (input.closest("#rule-form") && document.querySelector("#preview .results")) {
      htmx.trigger("#preview-form", "submit");
    }
  },
  // the title of an id already filled in (a stored rule's pins)
  async title(input) {
    const q = input.value.trim();
    if (!q || input.dataset.appendTo) return;
    const resp = await fetch(Picker.url(input, q, true), { credentials: "same-origin" });
    if (!resp.ok) return;
    const holder = document.createElement("ul");
    holder.innerHTML = await resp.text();
    const found = holder.querySelector(`li[role=option]`);
    if (found && found.dataset.id === q) Picker.label(input, found.dataset.title);
  },
};
window.Picker = Picker;

document.addEventListener("input", (e) => {
  const input = e.target.closest && e.target.closest("input[data-product-picker]");
  if (!input) return;
  Picker.label(input, "");
  clearTimeout(Picker.timer);
  Picker.timer = setTimeout(() => Picker.search(input), 200);
});
document.addEventListener("keydown", (e) => {
  const input = e.target.closest && e.target.closest("input[data-product-picker]");
  if (!input || !input.parentElement.querySelector(".picks")) return;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    Picker.move(input, e.key === "ArrowDown" ? 1 : -1);
  } else if (e.key === "Enter") {
    const active = Picker.box(input).querySelector("li[aria-selected=true]");
    if (active) { e.preventDefault(); Picker.pick(input, active); }
  } else if (e.key === "Escape") {
    Picker.close(input);
  }
});
// mousedown, not click: it comes before the input's blur closes the list
document.addEventListener("mousedown", (e) => {
  const option = e.target.closest && e.target.closest(".picks li[role=option]");
  if (option) {
    e.preventDefault();
    Picker.pick(option.closest(".picker").querySelector("input[data-product-picker]"), option);
  }
});
document.addEventListener("focusout", (e) => {
  const input = e.target.closest && e.target.closest("input[data-product-picker]");
  if (input) setTimeout(() => Picker.close(input), 150);
});
function pickerTitles(root) {
  root.querySelectorAll("input[data-product-picker]").forEach((input) => Picker.title(input));
}
document.addEventListener("DOMContentLoaded", () => pickerTitles(document));
document.addEventListener("htmx:afterSwap", (e) => pickerTitles(e.target));
