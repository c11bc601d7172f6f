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
