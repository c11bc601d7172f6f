"""The rule editor's HTML form to and from the rules API's JSON, and API errors back onto form fields.

Form fields (one rule; ``k`` is the key of an action block, listed in order by the ``act`` fields)::

    name description priority enabled appliesToAllQueries   the rule's own fields
    q_match q_value start end user_group                    conditions (start/end: UTC, datetime-local)
    act=k  a{k}_type                                        one per action, in order
    a{k}_pid a{k}_pos  (repeated)                           pin: product and 1-based position
    a{k}_ids                                                hide: product ids, one per line or comma
    a{k}_field a{k}_value (repeated)  a{k}_weight            boost / bury / filter clauses
    a{k}_url  a{k}_query                                    redirect, rewrite

Nothing is validated here beyond shaping: the rules API's own validation answers, and its messages are
put next to the field they name (:func:`errors_by_field`). A clause value is written ``Nike`` (one
value), ``Nike | Puma`` (any of them), ``10..50`` (a range, both ends included) or ``>= 10`` / ``< 50``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from starlette.datastructures import FormData

from aisle.core.tenancy import TenantConfig

ACTION_TYPES = ("pin", "hide", "boost", "bury", "filter", "redirect", "rewrite")
QUERY_MATCHES = ("contains", "exact", "prefix", "regex", "any")
NUMERIC = ("number", "integer")
_NUM = r"-?\d+(?:\.\d+)?"
_RANGE = re.compile(rf"^\s*({_NUM})\s*\.\.\s*({_NUM})\s*$")
_BOUND = re.compile(rf"^\s*(>=|<=|>|<)\s*({_NUM})\s*$")
_OPS = {">=": "gte", "<=": "lte", ">": "gt", "<": "lt"}
_SYMBOLS = {v: k for k, v in _OPS.items()}


def field_types(config: TenantConfig) -> dict[str, str]:
    """Filterable catalog fields of the tenant and their types (``keyword``, ``number``, ...)."""
    return {a.name: a.type.value for a in config.attributes.attributes if a.filterable}


def _scalar(text: str, kind: str | None) -> Any:
    text = text.strip()
    if kind in NUMERIC:
        try:
            return float(text) if kind == "number" else int(text)
        except ValueError:
            return text  # the API names the problem
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_value(text: str, kind: str | None) -> Any:
    """A clause value as the API takes it (see the module docstring for the notation)."""
    if m := _RANGE.match(text):
        return {"gte": float(m.group(1)), "lte": float(m.group(2))}
    if m := _BOUND.match(text):
        return {_OPS[m.group(1)]: float(m.group(2))}
    if "|" in text:
        return [_scalar(part, kind) for part in text.split("|") if part.strip()]
    return _scalar(text, kind)


def format_value(value: Any) -> str:
    """The inverse of :func:`parse_value`, for showing a stored clause."""
    if isinstance(value, dict):
        if set(value) == {"gte", "lte"}:
            return f"{_num(value['gte'])}..{_num(value['lte'])}"
        return " ".join(f"{_SYMBOLS.get(k, k)} {_num(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " | ".join(format_value(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return _num(value) if isinstance(value, float) else str(value)


def _num(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _utc(text: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text):
        return text + ":00Z"
    return text


def _clauses(form: FormData, k: str, types: dict[str, str]) -> list[dict[str, Any]]:
    fields = form.getlist(f"a{k}_field")
    values = form.getlist(f"a{k}_value")
    out = []
    for f, v in zip(fields, values, strict=False):
        f, v = str(f).strip(), str(v)
        if f or v.strip():
            out.append({"field": f, "value": parse_value(v, types.get(f))})
    return out


def _action(form: FormData, k: str, types: dict[str, str]) -> dict[str, Any]:
    kind = str(form.get(f"a{k}_type", ""))
    a: dict[str, Any] = {"type": kind}
    if kind == "pin":
        pids = [str(p).strip() for p in form.getlist(f"a{k}_pid")]
        positions = [str(p).strip() for p in form.getlist(f"a{k}_pos")]
        a["items"] = [
            {"productId": p, "position": int(n) if n.isdigit() else n}
            for p, n in zip(pids, positions, strict=False)
            if p or n
        ]
    elif kind == "hide":
        a["productIds"] = [p for p in re.split(r"[\s,]+", str(form.get(f"a{k}_ids", ""))) if p]
    elif kind in ("boost", "bury"):
        a["condition"] = _clauses(form, k, types)
        weight = str(form.get(f"a{k}_weight", "")).strip()
        if weight:
            a["weight"] = _scalar(weight, "number")
    elif kind == "filter":
        a["filters"] = _clauses(form, k, types)
    elif kind == "redirect":
        a["url"] = str(form.get(f"a{k}_url", "")).strip()
    elif kind == "rewrite":
        a["query"] = str(form.get(f"a{k}_query", ""))
    return a


def parse_rule_form(form: FormData, types: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """``(rule JSON for the API, the action keys in order)`` from a submitted rule form."""
    keys = [str(k) for k in form.getlist("act")]
    query: dict[str, Any] = {"match": str(form.get("q_match", "any"))}
    if query["match"] != "any":
        query["value"] = str(form.get("q_value", ""))
    conditions: dict[str, Any] = {"query": query}
    for name in ("start", "end"):
        if (when := _utc(str(form.get(name, "")))) is not None:
            conditions[name] = when
    if group := str(form.get("user_group", "")).strip():
        conditions["userGroup"] = group
    priority = str(form.get("priority", "0")).strip() or "0"
    rule = {
        "name": str(form.get("name", "")),
        "description": str(form.get("description", "")),
        "priority": int(priority) if re.fullmatch(r"-?\d+", priority) else priority,
        "enabled": form.get("enabled") == "on",
        "appliesToAllQueries": form.get("appliesToAllQueries") == "on",
        "conditions": conditions,
        "actions": [_action(form, k, types) for k in keys],
    }
    return rule, keys


def errors_by_field(errors: list[tuple[str, str]], keys: list[str]) -> dict[str, list[str]]:
    """API error paths (``actions.0.pin.items.1.position``) onto form slots (``a<k>``, ``q``, ``name``)."""
    out: dict[str, list[str]] = defaultdict(list)
    for path, message in errors:
        parts = path.split(".")
        slot, rest = "_form", path
        if parts[0] == "actions" and len(parts) > 1 and parts[1].isdigit():
            i = int(parts[1])
            tail = [p for p in parts[2:] if p not in ACTION_TYPES]
            slot = f"a{keys[i]}" if i < len(keys) else "actions"
            rest = ".".join(tail)
        elif parts[0] == "conditions" and len(parts) > 1:
            slot = {"query": "q", "start": "start", "end": "end", "userGroup": "user_group"}.get(
                parts[1], "_form"
            )
            rest = ".".join(parts[2:])
        elif parts[0] in ("name", "description", "priority", "actions", "conditions", "appliesToAllQueries"):
            slot, rest = parts[0], ".".join(parts[1:])
        out[slot].append(f"{rest}: {message}" if rest else message)
    return dict(out)


def blank_action(kind: str) -> dict[str, Any]:
    """An empty action of ``kind`` for a new editor block."""
    blanks: dict[str, dict[str, Any]] = {
        "pin": {"type": "pin", "items": [{"productId": "", "position": 1}]},
        "hide": {"type": "hide", "productIds": []},
        "boost": {"type": "boost", "condition": [{"field": "", "value": ""}], "weight": 20},
        "bury": {"type": "bury", "condition": [{"field": "", "value": ""}], "weight": 20},
        "filter": {"type": "filter", "filters": [{"field": "", "value": ""}]},
        "redirect": {"type": "redirect", "url": ""},
        "rewrite": {"type": "rewrite", "query": ""},
    }
    return blanks[kind]


def window_input(value: str | None) -> str:
    """An ISO instant as a ``datetime-local`` value in UTC (``2026-11-27T00:00``)."""
    if not value:
        return ""
    from datetime import UTC, datetime

    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M")
