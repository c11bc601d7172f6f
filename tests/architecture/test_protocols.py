"""A Protocol is declared once: two modules declaring one role drift apart (issue 40: the running
experiments' Protocol was declared by search and by recs; it now lives in ``aisle.experiments.running``).

    python -m pytest tests/architecture -q
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.architecture.test_layers import SRC


def _is_protocol(base: ast.expr) -> bool:
    if isinstance(base, ast.Subscript):  # Protocol[T]
        base = base.value
    return (isinstance(base, ast.Name) and base.id == "Protocol") or (
        isinstance(base, ast.Attribute) and base.attr == "Protocol"
    )


def protocols(root: Path) -> dict[str, list[str]]:
    """Each Protocol class name declared under ``root``, with the files (relative to it) declaring it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and any(_is_protocol(b) for b in node.bases):
                found[node.name].append(str(path.relative_to(root)))
    return found


def test_no_protocol_is_declared_twice() -> None:
    found = protocols(SRC / "aisle")
    twice = {name: where for name, where in found.items() if len(where) > 1}
    assert "RunningExperiments" in found and "Promotion" in found  # the checker sees Protocols at all
    assert not twice, f"Protocols declared more than once: {twice}"


def test_the_checker_sees_a_protocol_declared_twice(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from typing import Protocol\nclass Runs(Protocol): ...\n")
    (tmp_path / "b.py").write_text("import typing\nclass Runs(typing.Protocol[T]): ...\nclass Not: ...\n")
    assert protocols(tmp_path) == {"Runs": ["a.py", "b.py"]}
