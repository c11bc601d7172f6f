"""Services stay thin: orchestration and domain logic live in the engines (docs/style.md).

A service module parses a request, calls one front door and shapes the answer. What would show domain
logic creeping in is measured from the source, each against a budget:

- **no data libraries**: numpy, polars, DuckDB, tantivy and the like are the engines' tools, so a
  service that imports one is computing something an engine should;
- **engine areas**: a route, state or schema module reaches at most :data:`MAX_AREAS` engine packages,
  an app factory (which wires them) at most :data:`MAX_AREAS_APP`;
- **function size**: a route handler or helper is at most :data:`MAX_FUNCTION_LINES` lines, an app
  factory at most :data:`MAX_FACTORY_LINES`;
- **module size**: at most :data:`MAX_MODULE_LINES` lines (the house's limit is 400);
- the edit service, a relay to recs admin and the behaviour engine, imports neither ``analytics`` nor
  ``experiments`` (issue 40).

Run ``python -m pytest tests/architecture -q`` to see the offenders named.
"""

from __future__ import annotations

import ast
from pathlib import Path

SERVICES = Path(__file__).resolve().parents[2] / "src" / "aisle" / "services"
ENGINES = frozenset({"catalog", "vectors", "experiments", "search", "recs", "analytics", "behaviour"})
DATA_LIBRARIES = frozenset(
    {
        "numpy", "polars", "pandas", "duckdb", "pyarrow", "scipy", "statsmodels", "tantivy", "usearch",
        "lightgbm", "onnxruntime", "tokenizers", "pyspark",
    }
)  # fmt: skip
MAX_AREAS = 3
MAX_AREAS_APP = 4
MAX_FUNCTION_LINES = 50
MAX_FACTORY_LINES = 90
FACTORIES = frozenset({"create_app", "service_app"})
MAX_MODULE_LINES = 320


def _modules() -> dict[str, ast.Module]:
    return {
        str(p.relative_to(SERVICES)): ast.parse(p.read_text(), str(p)) for p in sorted(SERVICES.rglob("*.py"))
    }


def _imported(tree: ast.Module) -> set[str]:
    """Every module name imported anywhere in ``tree`` (lazy imports count)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _areas(tree: ast.Module) -> set[str]:
    return {m.split(".")[1] for m in _imported(tree) if m.startswith("aisle.") and m.split(".")[1] in ENGINES}


def test_the_budgets_see_what_they_measure() -> None:
    """The checks below would catch a fat service module (so their passing means something)."""
    fat = ast.parse(
        "import numpy as np\nfrom aisle.search.engine import SearchEngine\nfrom aisle.recs.jobs import Job\n"
        "from aisle.analytics.log import ParquetLog\nfrom aisle.behaviour.engine import BehaviourEngine\n"
        "def route():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    )
    assert "numpy" in _imported(fat)
    assert len(_areas(fat)) == 4 > MAX_AREAS
    assert max(_function_lengths(fat).values()) > MAX_FUNCTION_LINES


def test_no_service_module_imports_a_data_library() -> None:
    offenders = {
        name: sorted(m for m in _imported(tree) if m.split(".")[0] in DATA_LIBRARIES)
        for name, tree in _modules().items()
    }
    assert not {k: v for k, v in offenders.items() if v}, "data work belongs in an engine"


def test_each_service_module_reaches_few_engines() -> None:
    over = {}
    for name, tree in _modules().items():
        budget = MAX_AREAS_APP if Path(name).name == "app.py" else MAX_AREAS
        if len(areas := _areas(tree)) > budget:
            over[name] = sorted(areas)
    assert not over, f"a service module reaching more than {MAX_AREAS} engines orchestrates: {over}"


def _function_lengths(tree: ast.Module) -> dict[str, int]:
    return {
        f"{node.name}:{node.lineno}": (node.end_lineno or node.lineno) - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_service_functions_stay_short() -> None:
    long = {}
    for name, tree in _modules().items():
        for function, lines in _function_lengths(tree).items():
            budget = MAX_FACTORY_LINES if function.split(":")[0] in FACTORIES else MAX_FUNCTION_LINES
            if lines > budget:
                long[f"{name}:{function}"] = lines
    assert not long, f"service functions over budget (handlers {MAX_FUNCTION_LINES} lines): {long}"


def test_service_modules_stay_small() -> None:
    sizes = {str(p.relative_to(SERVICES)): len(p.read_text().splitlines()) for p in SERVICES.rglob("*.py")}
    assert not {k: v for k, v in sizes.items() if v > MAX_MODULE_LINES}


def test_the_edit_service_imports_neither_analytics_nor_experiments() -> None:
    reached = {
        name: sorted(_areas(tree) & {"analytics", "experiments"})
        for name, tree in _modules().items()
        if name.startswith("edit/")
    }
    assert reached and not {k: v for k, v in reached.items() if v}, reached
