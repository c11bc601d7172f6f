"""How a numeric value or range reads in facets and filters: ``"500-1000"``, ``"5000+"``, ``"12"``."""

from __future__ import annotations


def number_label(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def range_label(lo: float | None, hi: float | None) -> str:
    if lo is None:
        return f"0-{number_label(hi)}" if hi is not None else "all"
    return f"{number_label(lo)}-{number_label(hi)}" if hi is not None else f"{number_label(lo)}+"
