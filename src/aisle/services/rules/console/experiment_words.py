"""An experiment as a merchandiser reads it: what each variant changes in words, its history in time
order, and what its results say about the plan, the split and the decision.

The API speaks JSON (``{"hybrid": {"enabled": false}}``, ``{"ranker": 3}``); the page says
"hybrid off", "ranker v3 for 50% of visitors". History entries are shown oldest first by their time:
a demo experiment is created today with a start and a stop in the past, and the stored list keeps
the order they were written in.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

NAMES = {
    "conversionRate": "conversion per visitor",
    "clickThroughRate": "click-through rate (per search)",
    "revenuePerVisitor": "revenue per visitor",
}
ACTIONS = {
    "created": "Created as a draft",
    "replaced": "Draft edited",
    "started": "Started: visitors are split between the variants",
    "stopped": "Stopped: every visitor gets the live setting again",
}


def _rules(ids: list[str]) -> str:
    return ("rule " if len(ids) == 1 else "rules ") + ", ".join(ids)


def _settings(prefix: str, value: Any) -> list[str]:
    """``stages.min_hits = 5`` for each leaf of a partial ``global_configuration``."""
    if isinstance(value, dict) and value:
        return [line for k, v in value.items() for line in _settings(f"{prefix}.{k}" if prefix else k, v)]
    return [f"setting {prefix} = {json.dumps(value)}"]


def _containers(containers: dict[str, Any]) -> list[str]:
    words = []
    for cid, change in containers.items():
        for slot, model in sorted((change.get("slots") or {}).items(), key=lambda kv: int(kv[0])):
            words.append(f"container {cid}: slot {int(slot) + 1} serves model {model}")
        off = change.get("rulesOff") or []
        if off:
            words.append(f"container {cid}: " + ("its rules off" if "*" in off else f"{_rules(off)} off"))
    return words


def change_words(changes: dict[str, Any] | None) -> list[str]:
    """What a variant's ``changes`` (the API's JSON) do, one short phrase each; empty: nothing."""
    changes = changes or {}
    words = []
    if changes.get("rulesOff"):
        words.append(_rules(changes["rulesOff"]) + " off")
    if changes.get("rulesOn"):
        words.append(_rules(changes["rulesOn"]) + " on")
    hybrid = changes.get("hybrid") or {}
    if hybrid.get("enabled") is not None:
        words.append("hybrid on" if hybrid["enabled"] else "hybrid off")
    if hybrid.get("blendWeight") is not None:
        words.append(f"hybrid blend weight {hybrid['blendWeight']:g}")
    ranker = changes.get("ranker")
    if ranker == "none":
        words.append("no learned ranker")
    elif ranker is not None:
        words.append(f"ranker v{ranker}")
    if changes.get("settings"):
        words.extend(_settings("", changes["settings"]))
    return words + _containers(changes.get("containers") or {})


def share_text(share: float) -> str:
    """A share of visitors, ``50%`` or ``33.3%``."""
    return f"{share * 100:.1f}".removesuffix(".0") + "%"


def variant_line(variant: dict[str, Any], share: float) -> str:
    """``ranker v3, hybrid off for 50% of visitors``; a variant changing nothing: the live setting."""
    words = change_words(variant.get("changes"))
    what = ", ".join(words) if words else "the live setting"
    return f"{what} for {share_text(share)} of visitors"


def shares(variants: list[dict[str, Any]]) -> dict[str, float]:
    """Each variant's planned share of visitors (weights are relative)."""
    total = sum(float(v.get("weight", 1)) for v in variants) or 1.0
    return {v["id"]: float(v.get("weight", 1)) / total for v in variants}


def history_lines(exp: dict[str, Any]) -> list[dict[str, str]]:
    """The experiment's history oldest first, each ``{"at": "2026-11-12 09:00 UTC", "text"}``."""
    variants = {v["id"]: v for v in exp["variants"]}
    entries = sorted(exp.get("history") or [], key=lambda h: datetime.fromisoformat(h["at"]))
    lines = []
    for h in entries:
        text = ACTIONS.get(h["action"], h["action"].capitalize())
        if h["action"] == "promoted":
            chosen = variants.get(h.get("variant") or "", {})
            words = change_words(chosen.get("changes"))
            text = (
                f"Promoted {h.get('variant')}: " + ", ".join(words) + " is the live setting now"
                if words
                else f"Promoted {h.get('variant')}: the live setting is kept"
            )
        at = datetime.fromisoformat(h["at"])
        lines.append({"at": at.strftime("%Y-%m-%d %H:%M UTC"), "text": text, "action": h["action"]})
    return lines


def split_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per variant: visitors, planned share and actual share (the sample-ratio check's table)."""
    total = sum(v["visitors"] for v in results["variants"])
    return [
        {
            "id": v["id"],
            "visitors": v["visitors"],
            "planned": share_text(v["weight"]),
            "actual": share_text(v["visitors"] / total) if total else "—",
        }
        for v in results["variants"]
    ]


def progress(results: dict[str, Any]) -> dict[str, Any] | None:
    """Where the test stands against its plan: the metric, the visitors it needs per variant, the
    fewest any variant has, that as a share (``percent``, capped at 100; ``share``: its text, "<1%"
    rather than a 0% that has visitors), and whether the plan is reached."""
    plan = results.get("sampleSize")
    if not plan:
        return None
    fewest = min(v["visitors"] for v in results["variants"])
    percent = min(100, int(fewest * 100 / plan["visitorsPerVariant"]))
    return {
        **plan,
        "metricName": NAMES[plan["metric"]],
        "fewest": fewest,
        "percent": percent,
        "share": "<1%" if percent == 0 and fewest else f"{percent}%",
    }


def promote_choice(results: dict[str, Any] | None) -> str:
    """The variant the Promote form preselects: the winner; none (an explicit choice) without one."""
    return str(results["winner"]) if results and results.get("winner") else ""
