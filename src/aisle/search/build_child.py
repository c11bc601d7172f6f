"""A search process's catalog builds in a child process (issue 42): ``python -m aisle.search.build_child``.

Building a catalog version's index directory (:func:`aisle.search.opening.prepare_index`) or a tenant's
suggestion tables (:meth:`aisle.search.suggest.registry.SuggesterRegistry.build_tables`) allocates
hundreds of megabytes at a million products (the catalog frame, the documents, the candidates, polars'
buffers) that glibc and polars' allocator keep in the process afterwards: at 300,000 generated products
the search worker that built the suggestions held 70-90 MiB more than its sibling for good. Run in a
child at nice :data:`NICE`, the build's memory goes with the child, the worker's event loop keeps its
interpreter lock, and the worker maps the files the child wrote, as its siblings do.

``python -m aisle.search.build_child [--storage-url URL] --data-dir DIR index TENANT VERSION`` (the
attribute configuration as JSON on standard input) or ``... suggest TENANT``. The child reads the
bucket from the settings it inherits, ``--storage-url`` naming it; it exits 0 once the files are
written (or were there), 2 with ``{"error": {"code", "message"}}`` on its last line for an
:class:`~aisle.core.errors.AisleError`, anything else on a failure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from aisle.core.errors import AisleError
from aisle.core.tenant_config import AttributeConfiguration

NICE = 5
"""The child's niceness: below the searches, as the applier's (a build has no latency goal)."""


def main(argv: list[str] | None = None) -> int:
    """The child's entry point (see the module)."""
    from aisle.core.tenancy import child_tenants

    parser = argparse.ArgumentParser(prog="aisle.search.build_child")
    parser.add_argument("--storage-url")
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("what", choices=["index", "suggest"])
    parser.add_argument("tenant")
    parser.add_argument("version", nargs="?")
    args = parser.parse_args(argv)
    tenants = child_tenants(args.storage_url, NICE)
    try:
        if args.what == "index":
            from aisle.search.opening import prepare_index

            attributes = AttributeConfiguration.model_validate_json(sys.stdin.buffer.read())
            prepare_index(tenants, args.data_dir, args.tenant, args.version, attributes)
        else:
            from aisle.search.suggest.registry import build_suggestion_tables

            build_suggestion_tables(tenants, args.data_dir, args.tenant)
    except AisleError as exc:
        print(orjson.dumps({"error": {"code": str(exc.code), "message": exc.message}}).decode())
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
