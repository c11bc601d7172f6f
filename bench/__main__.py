"""Run every benchmark module (``python -m bench [--only NAME] --data-dir ../shared/data``).

Benchmarks print figures; they never fail on speed. A module that raises is reported and the
others still run; the exit code is non-zero if any raised.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
import traceback
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument(
        "--only", action="append", default=[], help="run only these modules (e.g. bench_search)"
    )
    args = parser.parse_args()
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    if args.only:
        names = [n for n in names if n in args.only]
    failed = []
    for name in names:
        print(f"\n=== {name}", flush=True)
        start = time.perf_counter()
        try:
            importlib.import_module(f"bench.{name}").main(args.data_dir.resolve())
        except Exception:
            traceback.print_exc()
            failed.append(name)
        print(f"=== {name} took {time.perf_counter() - start:.1f} s", flush=True)
    if failed:
        print(f"\nbenchmarks that raised: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
