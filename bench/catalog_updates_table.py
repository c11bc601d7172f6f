"""``bench_catalog_updates``'s table: each figure for Typesense and Aisle, their ratio and the goal."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from bench.bench_search import pct
from bench.import_throughput import ImportRun
from bench.search_load import WrkResult
from bench.update_lag import LagRun
from bench.update_readback import Readback

TS, AISLE = "Typesense 0.24.1", "Aisle"


@dataclass
class Results:
    """What the run measured, by (tenant, engine name) or engine name."""

    params: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    single: dict[tuple[str, str], LagRun] = field(default_factory=dict)
    stream: dict[str, LagRun] = field(default_factory=dict)
    baseline: dict[str, WrkResult] = field(default_factory=dict)
    loaded: dict[str, WrkResult] = field(default_factory=dict)
    readback: dict[tuple[str, str], Readback] = field(default_factory=dict)
    imports: dict[tuple[str, str], ImportRun] = field(default_factory=dict)


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _p50_p99(run: LagRun | None) -> tuple[str, tuple[float, float] | None]:
    if run is None or not run.lags_ms:
        return "none found", None
    p50, p99 = statistics.median(run.lags_ms), pct(run.lags_ms, 99)
    return f"{_ms(p50)} / {_ms(p99)} ms", (p50, p99)


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def _lag_rows(label: str, runs: dict[str, LagRun | None], goal: str, wait_s: float) -> list[list[str]]:
    ts_text, ts = _p50_p99(runs.get(TS))
    ai_text, ai = _p50_p99(runs.get(AISLE))
    ratio = f"{_ratio(ai[0], ts[0])} / {_ratio(ai[1], ts[1])}" if ai and ts else "-"
    rows = [[label, ts_text, ai_text, ratio, goal]]
    counts = []
    for name in (TS, AISLE):
        run = runs.get(name)
        counts.append(f"{run.not_found} of {run.probed} (+{run.refused} refused)" if run is not None else "-")
    rows.append([f"  not searchable within {wait_s:.0f} s", *counts, "", "0"])
    return rows


def _searchable(run: ImportRun | None, wait_s: float) -> str:
    if run is None:
        return "-"
    return f"not within {wait_s:.0f} s" if run.searchable_s is None else f"{run.searchable_s * 1000:,.0f} ms"


def _table(r: Results) -> list[list[str]]:
    p = r.params
    rows: list[list[str]] = []
    for tenant in p["tenants"]:
        runs = {name: r.single.get((tenant, name)) for name in (TS, AISLE)}
        n = p["single_changes"]
        worst = " (~: p99 of fewer than 100 is the worst)" if n < 100 else ""
        label = f"one change to searchable, {tenant}: p50 / p99 of {n}{worst}"
        rows += _lag_rows(label, runs, "<= 50 ms / <= 1 s", p["wait_s"])
    if r.stream:
        ts, ai = r.stream.get(TS), r.stream.get(AISLE)
        achieved = [f"{s.rate:,.0f}/s ({s.acked:,} in {s.seconds:.0f} s)" if s else "-" for s in (ts, ai)]
        asked = f"sustained: updates acknowledged a second (asked {p['rate']:.0f}/s for {p['seconds']:.0f} s)"
        rows.append(
            [asked, *achieved, _ratio(ai.rate if ai else None, ts.rate if ts else None), ">= 1,000/s"]
        )
        sampled = len((ai or ts).lags_ms) + (ai or ts).not_found if (ai or ts) else 0  # type: ignore[union-attr]
        rows += _lag_rows(
            f"sustained: ack -> searchable p50 / p99 ({sampled} sampled, ~ one probe round)",
            dict(r.stream),
            "<= 200 ms / <= 1 s",
            p["wait_s"],
        )
        rounds = [f"{statistics.median(s.rounds):.0f} ms" if s.rounds else "-" for s in (ts, ai) if s]
        rows.append(["  probe round, median (the lag's resolution)", *rounds, "", ""])
    if r.loaded:
        cells = []
        for name in (TS, AISLE):
            base, under = r.baseline.get(name), r.loaded.get(name)
            cells.append(
                f"{under.p99_ms:.1f} / {base.p99_ms:.1f} ms = {under.p99_ms / base.p99_ms:.2f}x"
                if base and under
                else "-"
            )
        ts_b, ai_b = r.baseline.get(TS), r.baseline.get(AISLE)
        ts_u, ai_u = r.loaded.get(TS), r.loaded.get(AISLE)
        ratio = "-"
        if ts_b and ai_b and ts_u and ai_u:
            ratio = f"{(ai_u.p99_ms / ai_b.p99_ms) / (ts_u.p99_ms / ts_b.p99_ms):.2f}x"
        rows.append(
            [
                f"search p99 during the stream / with no updates ({p['searchers']} wrk connections)",
                *cells,
                ratio,
                "<= 1.3x",
            ]
        )
        for label, got in (
            ("  searches during the stream: p50, q/s, non-2xx", r.loaded),
            ("  searches with no updates: p50, q/s, non-2xx", r.baseline),
        ):
            rows.append(
                [
                    label,
                    *(
                        f"{w.p50_ms:.1f} ms, {w.rate:,.0f}/s, {w.non_2xx + w.socket_errors}"
                        if (w := got.get(n))
                        else "-"
                        for n in (TS, AISLE)
                    ),
                    "",
                    "",
                ]
            )
    for tenant in p["tenants"]:
        cells = []
        for name in (TS, AISLE):
            b = r.readback.get((tenant, name))
            cells.append(f"{b.lost_by_id} / {b.lost_by_search} of {b.products:,}" if b else "-")
        rows.append([f"acknowledged updates lost, {tenant}: by id / by search", *cells, "", "0"])
        backs = [r.readback.get((tenant, n)) for n in (TS, AISLE)]
        settled = [f"{b.settled_s:.1f} s, {b.failed_reads} reads failed" if b else "-" for b in backs]
        rows.append(["  search found them all after; failed reads", *settled, "", ""])
    for tenant in p["tenants"]:
        ts_i, ai_i = r.imports.get((tenant, TS)), r.imports.get((tenant, AISLE))
        rates = [
            f"{i.rate:,.0f}/s ({i.products:,} in {i.seconds:.1f} s, {i.refused} not applied)" if i else "-"
            for i in (ts_i, ai_i)
        ]
        ratio = _ratio(ai_i.rate if ai_i else None, ts_i.rate if ts_i else None)
        rows.append(
            [
                f"full import, {tenant}: products a second to the answer (Aisle: durable)",
                *rates,
                ratio,
                ">= 1.00x",
            ]
        )
        shown = [_searchable(i, p["wait_s"]) for i in (ts_i, ai_i)]
        rows.append(["  the answer -> a product of the file searchable", *shown, "", ""])
    return rows


def print_table(r: Results) -> None:
    """The figures as a table, then the run's parameters and notes."""
    header = ["figure", TS, AISLE, "Aisle / Typesense", "goal"]
    rows = [header, *_table(r)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    print(
        "\n== the catalog as a live API (issue 41): Typesense 0.24.1 and Aisle, same catalog, same stream =="
    )
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    p = r.params
    stream = (
        f"sustained on fashion: {p['rate']:.0f} patches/s of price and discounted_price for "
        f"{p['seconds']:.0f} s from {p['clients']} client threads, {p['batch']} operations a request (Aisle "
        f"POST /products/batch, Typesense import?action=update), 1 in {p['sample_every']} sampled; "
        f"{p['searchers']} wrk connections, fashion mix (300 queries, size 20, 3 facets) during the stream "
        f"and for {p['baseline_s']:.0f} s before it"
        if "fashion" in p["tenants"]
        else "no sustained stream (it runs on fashion)"
    )
    print(
        f"\nparameters: tenants {','.join(p['tenants'])}; {p['single_changes']} single title changes per "
        f"tenant, one every {p['single_interval_s']} s; {stream}; every wait bounded at {p['wait_s']:.0f} s; "
        "client, wrk and servers share this machine's cores."
    )
    for name, run in r.stream.items():
        if run.refused:
            print(f"  {name}: {run.refused} updates not acknowledged; the first because: {run.why_refused}")
    for note in r.notes:
        print(f"  {note}")
