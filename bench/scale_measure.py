"""Helpers of ``bench_scale`` (issue 42): the generator as a timed child, memory from /proc, the generated
catalog as Typesense documents, and the printed table."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from bench.http_load import process_tree

# the scale tenant's searchable attributes and weights (aisle.demo.scale.scale_configs, the fashion
# tenant's), as Typesense is asked them (bench.bench_vs_typesense.Engines)
SEARCHABLE = [
    ("title", 3.0),
    ("brand", 2.0),
    ("color", 1.5),
    ("gender", 1.0),
    ("category", 1.0),
    ("article_type", 2.0),
    ("usage", 0.5),
]


@dataclass
class Generated:
    """``aisle demo scale`` as a child: wall time, the generator's and the import's own seconds (its
    output), and the child's peak RSS (MiB, ``wait4``'s ``ru_maxrss``)."""

    wall_s: float
    generate_s: float
    import_s: float
    peak_mib: float
    output: str


@dataclass
class SizeResult:
    """Every figure of one catalog size."""

    products: int
    rows: list[tuple[str, float | None, float | None, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, aisle: float | None, typesense: float | None, unit: str) -> None:
        self.rows.append((name, aisle, typesense, unit))


def generate(products: int, seed: int, out: Path, data_dir: Path, env: dict[str, str]) -> Generated:
    """Run ``aisle demo scale --tenant scale`` (generate, import, build the index) and time it.

    Raises:
        RuntimeError: the command failed (its output given).
    """
    args = ["demo", "scale", "--tenant", "scale", "--products", str(products), "--seed", str(seed)]
    wall, peak, output = run_cli([*args, "--out", str(out), "--data-dir", str(data_dir)], env)
    seconds = [float(m) for m in re.findall(r"products.*?, ([\d.]+)s\s*$", output, re.M)]
    generate_s, import_s = (seconds + [float("nan")] * 2)[:2]
    return Generated(wall, generate_s, import_s, peak, output)


def run_cli(args: list[str], env: dict[str, str], module: str = "aisle.cli") -> tuple[float, float, str]:
    """``python -m MODULE ARGS`` (default: the ``aisle`` command) as a child with ``env`` added: (wall s,
    its own peak RSS MiB from ``wait4``, not every child's maximum, its output).

    Raises:
        RuntimeError: the command failed (the end of its output given).
    """
    cmd = [sys.executable, "-m", module, *args]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    output = proc.stdout.read()  # the child's whole output (progress lines are short)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"aisle {' '.join(args)} failed ({proc.returncode}): {output[-1500:]}")
    return wall, usage.ru_maxrss / 1024, output


def typesense_docs(catalog: Path) -> list[dict[str, Any]]:
    """The generated rows as Typesense documents, named as the scale tenant's attributes (``name`` ->
    title, ``colour`` -> color, the category path as one ``master > sub > type`` string) with the prices."""
    table = pq.read_table(catalog).to_pylist()
    docs = []
    for r in table:
        path = [r[c] for c in ("master_category", "sub_category", "article_type") if r[c]]
        doc = {
            "id": r["id"],
            "title": r["name"],
            "brand": r["brand"],
            "color": r["colour"],
            "gender": r["gender"],
            "category": " > ".join(path),
            "article_type": r["article_type"],
            "usage": r["usage"],
            "price": r["price"],
            "discounted_price": r["discounted_price"],
        }
        docs.append({k: v for k, v in doc.items() if v not in (None, "")})
    return docs


def _status_kib(pid: int, name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    return 0


def rss_mib(pid: int) -> float:
    """``VmRSS`` of ``pid``, MiB."""
    return _status_kib(pid, "VmRSS") / 1024


def _rollup(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, value = line.partition(":")
        fields[name.strip()] = int(value.split()[0]) / 1024
    return fields


def workers_pss(serve_pid: int, field: str = "Pss") -> list[float]:
    """PSS (MiB) of each ``aisle.cli.worker`` child of the ``aisle serve`` process (shared pages count once
    over the processes mapping them); ``field="Anonymous"``: their private heap instead."""
    pids = [p for p in process_tree(serve_pid)[1:] if b"aisle.cli.worker" in _cmdline(p)]
    return [_rollup(p)[field] for p in pids]


def workers_private(serve_pid: int) -> list[float]:
    """Private memory (MiB: ``Private_Clean + Private_Dirty``, pages no other process maps) of each
    worker of the ``aisle serve`` process: what a worker adds to the host beyond the pages it shares."""
    pids = [p for p in process_tree(serve_pid)[1:] if b"aisle.cli.worker" in _cmdline(p)]
    return [_rollup(p)["Private_Clean"] + _rollup(p)["Private_Dirty"] for p in pids]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def print_table(result: SizeResult) -> None:
    """One size's figures, Aisle beside Typesense 0.24.1 with the ratio (Aisle / Typesense)."""
    print(f"\n== bench_scale: {result.products:,} products ==")
    head = f"{'figure':<52} {'Aisle':>12} {'Typesense':>12} {'ratio':>7}  unit"
    print(head)
    print("-" * len(head))
    for name, aisle, ts, unit in result.rows:
        ratio = f"{aisle / ts:.2f}x" if aisle is not None and ts else "-"
        print(f"{name:<52} {_fmt(aisle):>12} {_fmt(ts):>12} {ratio:>7}  {unit}")
    for note in result.notes:
        print(f"  note: {note}")
