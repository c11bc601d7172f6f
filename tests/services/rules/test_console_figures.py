"""The console writes figures in the tenant's locale and currency (CLDR through Babel), and a change
against the previous period relative for counts and money, in points for rates, with its tone."""

from __future__ import annotations

from aisle.services.rules.console.figures import Change, Figures


def test_figures_follow_the_locale_and_currency() -> None:
    india = Figures.of("en-IN", "INR")
    assert (india.number(1234567), india.money(1234567.891)) == ("12,34,567", "₹12,34,567.89")
    germany = Figures.of("de_DE", "EUR")
    assert (germany.number(12345), germany.percent(0.1234), germany.money(1234.5)) == (
        "12.345",
        "12,3\xa0%",
        "1.234,50\xa0€",
    )
    us = Figures.of("en", "USD")
    assert (us.number(2.25, 1), us.money(999), us.percent(None), us.money(None)) == (
        "2.2",
        "$999.00",
        "—",
        "—",
    )


def test_an_unknown_locale_falls_back_to_english() -> None:
    assert Figures.of("xx-nowhere", "USD").number(12345) == "12,345"


def test_changes_are_relative_for_counts_and_in_points_for_rates() -> None:
    fig = Figures.of("en", "USD")
    assert fig.change(120, 100, "count") == Change("+20.0%", "good")
    assert fig.change(80.0, 100.0, "money") == Change("-20.0%", "bad")
    assert fig.change(0.03, 0.02, "rate", better="down") == Change("+1.0 pts", "bad")
    assert fig.change(0.5, 0.5, "rate") == Change("+0.0 pts", "flat")
    assert fig.change(7, 3, "count", better="") == Change("+133.3%", "flat")
    assert fig.change(5, 0, "count") is None and fig.change(None, 0.1, "rate") is None
