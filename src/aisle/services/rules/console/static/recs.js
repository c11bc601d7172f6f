// Aisle console: the recommendation rule editor (FILTER / BOOST / BURY with a recursive condition
// builder). The rules live as JSON in #rules-data; every edit re-renders and writes them to the hidden
// input rules_json, which the container form and the preview send (the edit service validates them).
"use strict";
(() => {
  const root = document.getElementById("rules-editor");
  if (!root) return;
  const out = document.querySelector("input[name=rules_json]");
  const data = JSON.parse(document.getElementById("rules-data").textContent);
  const readOnly = root.dataset.readonly === "true";
  const slots = JSON.parse(root.dataset.slots || "[]");
  const fields = JSON.parse(root.dataset.fields || "[]");
  let errors = JSON.parse(root.dataset.errors || "{}"); // rule index -> the edit service's messages
  let rules = data;
  const LEAF_OPS = ["eq", "ne", "in", "not_in", "lt", "lte", "gt", "gte", "exists", "contains"];

  const el = (tag, attrs = {}, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
    }
    kids.flat().forEach((c) => e.append(c));
    if (readOnly && ["INPUT", "SELECT", "BUTTON"].includes(e.tagName)) e.disabled = true;
    return e;
  };
  const select = (value, options, onchange, label) =>
    el("select", { "aria-label": label, onchange: (ev) => onchange(ev.target.value) },
      options.map(([v, t]) => el("option", { value: v, selected: v === value }, t)));
  const parse = (text, op) => {
    const one = (t) => {
      t = t.trim();
      return t !== "" && !isNaN(Number(t)) ? Number(t) : t;
    };
    if (op === "in" || op === "not_in") return text.split("|").map(one).filter((v) => v !== "");
    if (op === "exists") return text !== "false";
    return one(text);
  };
  const show = (value) => (Array.isArray(value) ? value.join(" | ") : value === undefined ? "" : String(value));
  const save = () => { out.value = JSON.stringify(rules); };
  const redraw = () => { errors = {}; save(); render(); };

  // A condition node's editor; `set` replaces the node in its parent (null removes it).
  function node(cond, set) {
    if (cond.op === "and" || cond.op === "or") {
      const box = el("div", { class: "cond", "data-op": cond.op });
      box.append(el("div", { class: "group-head" },
        select(cond.op, [["and", "all of"], ["or", "any of"]], (v) => { cond.op = v; redraw(); }, "group"),
        el("button", { type: "button", class: "small", onclick: () => { cond.conditions.push({ op: "eq", field: "", value: "" }); redraw(); } }, "+ condition"),
        el("button", { type: "button", class: "small", onclick: () => { cond.conditions.push({ op: "and", conditions: [{ op: "eq", field: "", value: "" }] }); redraw(); } }, "+ group"),
        el("button", { type: "button", class: "small", onclick: () => { set({ op: "not", condition: cond }); redraw(); } }, "not"),
        el("button", { type: "button", class: "small danger", onclick: () => { set(null); redraw(); } }, "×")));
      cond.conditions.forEach((c, i) => box.append(node(c, (n) => {
        if (n === null) cond.conditions.splice(i, 1); else cond.conditions[i] = n;
      })));
      return box;
    }
    if (cond.op === "not") {
      const box = el("div", { class: "cond", "data-op": "not" });
      box.append(el("div", { class: "group-head" }, el("strong", {}, "NOT"),
        el("button", { type: "button", class: "small", onclick: () => { set(cond.condition); redraw(); } }, "remove not")));
      box.append(node(cond.condition, (n) => { if (n === null) set(null); else cond.condition = n; }));
      return box;
    }
    const row = el("div", { class: "clause leaf" });
    const field = el("input", { type: "text", value: cond.field, placeholder: "field", list: "rec-fields", "aria-label": "condition field",
      onchange: (e) => { cond.field = e.target.value.trim(); save(); } });
    const value = cond.op === "exists"
      ? select(String(cond.value !== false), [["true", "is set"], ["false", "is missing"]], (v) => { cond.value = v === "true"; save(); }, "exists")
      : el("input", { type: "text", value: show(cond.value), placeholder: cond.op.endsWith("in") ? "a | b | c" : "value", "aria-label": "condition value",
        onchange: (e) => { cond.value = parse(e.target.value, cond.op); save(); } });
    row.append(field,
      select(cond.op, LEAF_OPS.map((o) => [o, o.replace("_", " ")]), (v) => {
        cond.value = v === "exists" ? true : parse(show(cond.value), v); cond.op = v; redraw();
      }, "operator"),
      value,
      el("button", { type: "button", class: "small", title: "wrap in a group",
        onclick: () => { set({ op: "and", conditions: [cond] }); redraw(); } }, "( )"),
      el("button", { type: "button", class: "small danger", onclick: () => { set(null); redraw(); } }, "×"));
    return row;
  }

  function render() {
    root.replaceChildren();
    if (!rules.length) root.append(el("p", { class: "muted" }, "No recommendation rules: every model result is served as ranked."));
    rules.forEach((rule, i) => {
      const card = el("div", { class: errors[i] ? "action has-err" : "action", "data-action-type": rule.type.toLowerCase(), "data-rule": i });
      card.append(el("div", { class: "head" },
        select(rule.type, [["FILTER", "Filter"], ["BOOST", "Boost"], ["BURY", "Bury"]], (v) => { rule.type = v; redraw(); }, "rule type"),
        rule.type === "FILTER" ? el("span", { class: "muted" }, "keep only matching items")
          : el("label", { class: "muted" }, "weight ", el("input", { type: "number", step: "any", value: rule.weight ?? 1, style: "width:80px", "aria-label": "rule weight",
            onchange: (e) => { rule.weight = Number(e.target.value); save(); } })),
        select(rule.slotConfigId || "", [["", "every slot"], ...slots.map((s) => [s, `slot ${s}`])], (v) => {
          if (v) rule.slotConfigId = v; else delete rule.slotConfigId; save();
        }, "slot"),
        el("span", { class: "spacer" }),
        el("button", { type: "button", class: "small danger", onclick: () => { rules.splice(i, 1); redraw(); } }, "Remove")));
      (errors[i] || []).forEach((m) => card.append(el("p", { class: "err", role: "alert", "data-error-for": `rule${i}` }, m)));
      if (rule.condition) {
        card.append(node(rule.condition, (n) => { if (n === null) delete rule.condition; else rule.condition = n; }));
      } else {
        card.append(el("p", { class: "muted" }, "Matches every item. ",
          el("button", { type: "button", class: "small", onclick: () => { rule.condition = { op: "eq", field: "", value: "" }; redraw(); } }, "+ condition")));
      }
      root.append(card);
    });
    if (!readOnly) {
      root.append(el("div", { class: "addbar" }, ["FILTER", "BOOST", "BURY"].map((t) =>
        el("button", { type: "button", class: "small", "data-testid": `add-rec-${t.toLowerCase()}`,
          onclick: () => { rules.push({ type: t, weight: t === "FILTER" ? undefined : 0.5, condition: { op: "eq", field: "", value: "" } }); redraw(); } }, `+ ${t.toLowerCase()}`))));
    }
    const list = el("datalist", { id: "rec-fields" }, fields.map((f) => el("option", { value: f })));
    root.append(list);
  }
  save();
  render();
})();
