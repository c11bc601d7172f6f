"""Compaction in a child process at low CPU priority, for a process whose threads serve searches.

Folding a change log (:func:`aisle.catalog.compaction.compact`) is seconds of Python for a tenant of tens
of thousands of products (every operation since the last version applied to the catalog state, the
products written again as a version). Issue 41's profile of a search worker under 1,000 price changes a
second: the background compactor was 8.5% of the worker's samples, and with it on search p99 was
50.7 ms against 40.7 ms with it off, each search waiting for the interpreter lock it held. So the search
service's :class:`~aisle.catalog.compaction.Compactor` folds each tenant in
``python -m aisle.catalog.compaction_child TENANT`` (:func:`fold_in_child`), at nice
:data:`NICE`, and the search processes keep only the lock-free wait for it. The child reads the bucket
from the settings it inherits, with ``--storage-url`` naming the bucket.

The child prints one line of JSON: ``{"compaction": {...}}`` (a new version), ``{"compaction": null}``
(nothing to fold) or ``{"error": {"code": ..., "message": ...}}`` (an :class:`AisleError`: a lease
held elsewhere is 409 ``catalog_compacting``), and exits 0, 0 or 2; anything else is a failure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable

import orjson

from aisle.catalog.compaction import Compaction
from aisle.core.errors import AisleError

NICE = 10
"""The child's niceness: it yields the CPU to searches; a fold has no latency goal but the next one."""
TIMEOUT_S = 900.0
"""A child still folding after this long is killed (its lease expires; the next tick tries again)."""


def fold_in_child(storage_url: str) -> Callable[[str], Compaction | None]:
    """A :class:`~aisle.catalog.compaction.Compactor` ``fold`` running each compaction in a child
    process over the bucket at ``storage_url``. Raises what :func:`compact` raises (as AisleError with
    its code), RuntimeError for a child that failed otherwise."""

    def fold(tenant: str) -> Compaction | None:
        cmd = [sys.executable, "-m", "aisle.catalog.compaction_child", "--storage-url", storage_url, tenant]
        env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        done = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S, env=env)
        lines = done.stdout.strip().splitlines()
        answer = orjson.loads(lines[-1]) if lines and done.returncode in (0, 2) else None
        if answer is None:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"compaction child exited {done.returncode}: {' | '.join(tail)}")
        if "error" in answer:
            raise AisleError(answer["error"]["message"], code=answer["error"]["code"])
        folded = answer["compaction"]
        return Compaction(**folded) if folded is not None else None

    return fold


def main(argv: list[str] | None = None) -> int:
    """``python -m aisle.catalog.compaction_child [--storage-url URL] TENANT``: fold one tenant's log."""
    import dataclasses

    from aisle.catalog.compaction import compact
    from aisle.core.tenancy import child_tenants

    parser = argparse.ArgumentParser(prog="aisle.catalog.compaction_child")
    parser.add_argument("--storage-url")
    parser.add_argument("tenant")
    args = parser.parse_args(argv)
    tenants = child_tenants(args.storage_url, NICE)
    try:
        folded = compact(tenants, args.tenant)
    except AisleError as exc:
        print(orjson.dumps({"error": {"code": str(exc.code), "message": exc.message}}).decode())
        return 2
    print(orjson.dumps({"compaction": dataclasses.asdict(folded) if folded else None}).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
