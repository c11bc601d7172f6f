"""The house's shape, checked from the source: imports point one way and no module grows past 400 lines.

Layers, lowest first (STYLE.md "The shape of the house"): ``core`` <- ``catalog`` <- ``vectors`` and
``experiments`` (the pure A/B parts, which search, recs and analytics all read) <- ``search``, ``recs``
and ``analytics`` (siblings that never import each other) <- ``behaviour`` (the shopper-behaviour
engine, which orchestrates the three) <- ``services`` <- ``demo`` <- ``cli``.
A service imports ``services.common`` and engines, never another service. Every import counts, also
one inside a function or under ``TYPE_CHECKING``: a lazy import hides a cycle, it does not remove it.
Run ``python -m pytest tests/architecture -q`` to see the offending imports named.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_LINES = 400
RANK: dict[str, float] = {
    "core": 0,
    "catalog": 1,
    "vectors": 2,
    "experiments": 2,
    "search": 3,
    "recs": 3,
    "analytics": 3,
    "behaviour": 3.5,
    "services": 4,
    "demo": 5,
    "cli": 6,
}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted((SRC / "aisle").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _imports(mod: str, path: Path) -> set[str]:
    """Every ``aisle...`` module that ``mod`` imports (absolute or relative), wherever the import sits."""
    found: set[str] = set()
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            targets = [name] + [f"{name}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        found.update(t for t in targets if t.split(".")[0] == "aisle")
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in mods.items():
        for target in _imports(mod, path):
            while target not in mods and "." in target:  # `from pkg import name` names a symbol
                target = target.rsplit(".", 1)[0]
            if target in mods and target != mod:
                graph[mod].add(target)
    return graph


def _area(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "aisle"


def _service(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "services" else None


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for mod, targets in _graph().items():
        for target in targets:
            a, b = _area(mod), _area(target)
            if b == "aisle":
                continue  # the version string
            if RANK[b] > RANK[a] or (RANK[a] == RANK[b] and a != b):
                wrong.append(f"{mod} -> {target}")
            elif a == b == "services" and _service(target) not in ("common", _service(mod)):
                wrong.append(f"{mod} -> {target} (services import only services.common)")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    graph = _graph()
    # a package's __init__ re-exporting its own modules is not a cycle between modules
    pruned = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    cycles = _cycles(pruned)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_modules_stay_under_400_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in _modules().values()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    """The walker itself: a relative import from a lower layer up is resolved and caught."""
    bad = tmp_path / "aisle" / "core" / "x.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from ..search import pipeline\n")
    assert _imports("aisle.core.x", bad) == {"aisle.search", "aisle.search.pipeline"}
