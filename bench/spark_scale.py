"""What ``bench_spark`` needs around the trainers: the enlarged Complete Journey, its Parquet inputs,
and one training per child process with its wall time and peak memory, under a time cap.

Peak memory is the peak resident set (``VmHWM``, polled from ``/proc/<pid>/status`` every 0.2 s) of
every process of the run, summed: the Python process (the embedded engine, or Spark's driver
program; also read by the child itself as it ends), the JVM (Spark in local
mode: driver and executor in one JVM) and any Python workers it forks. The sum bounds the
simultaneous peak from above.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

GB = 1024**3
POLL_SECONDS = 0.2


def enlarge(lines: pl.DataFrame, times: int) -> pl.DataFrame:
    """``lines`` with every household and basket copied ``times`` times under new ids.

    Copy 0 keeps the original ``household_id`` and ``basket_id``; copy ``n > 0`` appends ``-n`` to
    both. Products and timestamps stay, so every count of the co-purchase models (pairs, items,
    categories, baskets) is ``times`` times the original and the distinct pairs are the same.
    """
    if times == 1:
        return lines
    copies = pl.DataFrame({"copy": list(range(times))}, schema={"copy": pl.Int32})

    def renamed(col: str) -> pl.Expr:
        return (
            pl.when(pl.col("copy") == 0)
            .then(pl.col(col))
            .otherwise(pl.format("{}-{}", pl.col(col), pl.col("copy")))
            .alias(col)
        )

    return (
        lines.join(copies, how="cross")
        .with_columns(renamed("household_id"), renamed("basket_id"))
        .drop("copy")
    )


def write_inputs(folder: Path, data_dir: Path, scales: list[int]) -> dict[int, Path]:
    """Parquet inputs of the children under ``folder``, one sub-folder per scale (see
    ``bench.spark_train_child``): Complete Journey weeks < 49 (the demo's training weeks) enlarged
    ``scale`` times with its categories; at scale 1 also the priced catalog and popularity of
    GOOD_BETTER_BEST and the YooChoose 100k views of CUSTOMERS_ALSO_VIEW (those are not enlarged).
    Returns ``{scale: sub-folder}``."""
    from aisle.recs.events import (
        completejourney_categories,
        completejourney_lines,
        priced_catalog,
        yoochoose_events,
    )

    lines = completejourney_lines(max_week=49)
    cats = completejourney_categories()
    base = lines.select(pl.col("visitor_id").alias("household_id"), "basket_id", "item_id", "ts")
    out = {}
    for scale in scales:
        sub = folder / f"x{scale}"
        frames = {"lines": enlarge(base, scale), "categories": cats}
        if scale == 1:
            catalog, popularity = priced_catalog(lines, cats)
            views = yoochoose_events(data_dir).with_row_index("seq")
            frames |= {"catalog": catalog, "popularity": popularity, "views": views}
        for name, frame in frames.items():
            (sub / name).mkdir(parents=True)
            frame.write_parquet(sub / name / "part-0.parquet", row_group_size=1 << 20)
        out[scale] = sub
    return out


@dataclass
class Run:
    """One child's outcome: ``status`` ``ok``, ``timeout`` or ``failed``; ``seconds`` of training
    (reported by the child), ``peak`` and ``jvm_peak`` in bytes (see the module docstring), ``size``
    rows of the model, ``error`` the child's last stderr line naming an error on failure."""

    status: str
    seconds: float = 0.0
    peak: int = 0
    jvm_peak: int = 0
    size: int = 0
    error: str = ""
    peaks: dict[int, tuple[str, int]] = field(default_factory=dict)


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process visible in /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, out, todo = _children(), [], [pid]
    while todo:
        kids = tree.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _hwm(pid: int) -> tuple[str, int] | None:
    """``(command name, VmHWM in bytes)`` of ``pid``, or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if "VmHWM" not in fields:
        return None
    return fields["Name"].strip(), int(fields["VmHWM"].split()[0]) * 1024


def measure(args: list[str], timeout: float) -> Run:
    """Run ``python -m bench.spark_train_child *args`` with a cap of ``timeout`` seconds (the whole
    child: imports, JVM start and training), polling the peak memory of its processes."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.spark_train_child", *args],
            stdout=out,
            stderr=err,
            cwd=Path(__file__).resolve().parents[1],  # the repository, where `bench` is a package
            start_new_session=True,  # its own process group, killed whole on timeout
        )
        peaks: dict[int, tuple[str, int]] = {}
        start, status = time.monotonic(), ""
        while True:
            pid, code, _ = os.wait4(child.pid, os.WNOHANG)
            if pid:
                status = "ok" if code == 0 else "failed"
                break
            for p in [child.pid, *_descendants(child.pid)]:
                seen = _hwm(p)
                if seen and seen[1] > peaks.get(p, ("", 0))[1]:
                    peaks[p] = seen
            if time.monotonic() - start > timeout:
                for p in [child.pid, *peaks]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(p, signal.SIGKILL)  # the JVM too, should it have left the group
                os.wait4(child.pid, 0)
                status = "timeout"
                break
            time.sleep(POLL_SECONDS)
        child.returncode = 0  # reaped above: keep Popen from waiting on the pid again
        others = [hwm for p, (_, hwm) in peaks.items() if p != child.pid]
        jvm = sum(hwm for p, (name, hwm) in peaks.items() if name == "java" and p != child.pid)
        run = Run(status, peak=peaks.get(child.pid, ("", 0))[1], jvm_peak=jvm, peaks=peaks)
        out.seek(0)
        err.seek(0)
        if status == "ok":
            report = json.loads(out.read().decode().strip().splitlines()[-1])
            run.seconds, run.size = report["seconds"], report["size"]
            run.peak = max(run.peak, report["peak"])
        elif status == "failed":
            lines = [x.strip() for x in err.read().decode(errors="replace").splitlines() if x.strip()]
            named = [x for x in lines if "Error" in x or "Exception" in x] or lines
            run.error = named[-1][:200] if named else f"exit status {code}"
        run.peak += sum(others)
        return run
