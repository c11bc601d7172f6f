"""One place that plans a page with pinned products.

A merchandising rule pins products to 1-based positions. The shopper asks for ``size`` results from
``offset``; the retrieval stages fetch the organic results around the pins (:meth:`PinPlan.organic`),
and :meth:`PinPlan.place` interleaves both: each pin at its position on the page it falls on, pins past
the end of the results at the end (pin ``i``, by position, lands at ``min(position, organic + i + 1)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from aisle.search.hits import Hit


@dataclass(frozen=True)
class PinPlan:
    """The shopper's page and the pins on it.

    ``offset``/``size``: the page asked for (0-based offset, results). ``pins``: (position, catalog row)
    pairs, ascending by position, each position distinct. ``pinned_query`` matches the pinned products
    (taken out of the organic results, added back to what facets count).
    """

    offset: int
    size: int
    pins: tuple[tuple[int, int], ...]
    pinned_query: tantivy.Query

    def organic(self) -> tuple[int, int]:
        """(offset, size) of the organic results this page shows: the page less the pins on or before it."""
        before = sum(1 for pos, _ in self.pins if pos <= self.offset)
        on_page = sum(1 for pos, _ in self.pins if self.offset < pos <= self.offset + self.size)
        return self.offset - before, self.size - on_page

    def place(self, hits: list[Hit], organic_total: int) -> tuple[list[Hit], int]:
        """The page with the pins placed among ``hits`` (the organic window), and the total with pins.

        A pinned product carries the page's top organic score.
        """
        slots = {min(pos, organic_total + i + 1): row for i, (pos, row) in enumerate(self.pins)}
        top = max((h.score for h in hits), default=0.0)
        rest = iter(hits)
        page: list[Hit] = []
        for slot in range(self.offset + 1, self.offset + self.size + 1):
            if slot in slots:
                page.append(Hit(slots[slot], top))
            else:
                hit = next(rest, None)
                if hit is not None:
                    page.append(hit)
        return page, organic_total + len(self.pins)
