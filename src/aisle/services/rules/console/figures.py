"""How the console writes analytics figures: in the tenant's locale and currency, with their change.

Numbers, percentages and money follow the tenant's ``global_configuration`` (``locale``, ``currency``)
through CLDR's rules (Babel): ``12,345`` in ``en``, ``12.345`` in ``de``, ``₹12,34,567.89`` in ``en-IN``.
An unknown locale falls back to ``en``. A change against the previous period is relative for counts and
money (``+12.5%``) and in percentage points for rates (``+1.2 pts``): a rate's relative change (a 2%
no-result rate "up 50%") reads as larger than it is.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal

from babel import Locale, UnknownLocaleError
from babel.numbers import NumberPattern, format_currency

DASH = "—"
FALLBACK_LOCALE = "en"
Kind = Literal["count", "money", "rate"]


@dataclass(frozen=True)
class Change:
    """A figure's change against the previous period: ``text`` (signed), ``tone`` (``good``, ``bad`` or
    ``flat``: whether the merchandiser should be glad)."""

    text: str
    tone: Literal["good", "bad", "flat"]


@dataclass(frozen=True)
class Figures:
    """The formats of one tenant's figures (``locale``: a CLDR locale such as ``en_IN``)."""

    locale: str
    currency: str

    @classmethod
    def of(cls, locale: str, currency: str) -> Figures:
        """The formats of ``locale`` (``en-IN`` or ``en_IN``; unknown: ``en``) and ``currency``."""
        try:
            parsed = str(Locale.parse(locale.replace("-", "_")))
        except (UnknownLocaleError, ValueError, TypeError):
            parsed = FALLBACK_LOCALE
        return cls(parsed, currency)

    def _pattern(self, kind: Literal["decimal", "percent"], digits: int) -> tuple[NumberPattern, Locale]:
        """The locale's own pattern (its grouping: ``12,34,567`` in ``en_IN``; its sign and spacing:
        ``12,3 %`` in ``de``) with exactly ``digits`` decimals."""
        locale = Locale.parse(self.locale)
        formats = locale.decimal_formats if kind == "decimal" else locale.percent_formats
        pattern = copy.copy(formats[None])
        pattern.frac_prec = (digits, digits)
        return pattern, locale

    def number(self, value: float | None, digits: int = 0) -> str:
        """A count or mean with the locale's separators, ``digits`` decimals; None as a dash."""
        if value is None:
            return DASH
        pattern, locale = self._pattern("decimal", digits)
        return str(pattern.apply(value, locale))

    def percent(self, value: float | None) -> str:
        """A rate (0..1) as a percentage with one decimal; None (nothing to divide by) as a dash."""
        if value is None:
            return DASH
        pattern, locale = self._pattern("percent", 1)
        return str(pattern.apply(value, locale))

    def money(self, value: float | None) -> str:
        """An amount in the tenant's currency (its symbol and decimals, the locale's placement)."""
        if value is None:
            return DASH
        return str(format_currency(value, self.currency, locale=self.locale))

    def change(
        self, now: float | None, before: float | None, kind: Kind, *, better: Literal["up", "down", ""] = "up"
    ) -> Change | None:
        """``now`` against ``before``: relative for counts and money, in points for rates. None when there
        is nothing to compare (no figure, or a count that was 0). ``better``: which way is good news
        (``""``: neither, the tone stays ``flat``)."""
        if now is None or before is None:
            return None
        if kind == "rate":
            diff = (now - before) * 100
            text = self.number(diff, 1) + " pts"
        else:
            if before == 0:
                return None
            diff = (now - before) / before
            text = self.percent(diff)
        text = text if diff < 0 else "+" + text
        if round(diff, 3) == 0 or not better:
            return Change(text, "flat")
        return Change(text, "good" if (diff > 0) == (better == "up") else "bad")
