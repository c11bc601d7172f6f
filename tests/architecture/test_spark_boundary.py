"""pyspark stays behind ``aisle.recs.spark``, and only the command line reaches that package.

The services must start without pyspark (an optional extra) and never pay for a JVM: every import of
``pyspark`` is inside ``aisle.recs.spark``, and ``aisle.recs.spark`` is imported only by ``aisle.cli``
(``aisle train --engine spark``) and by itself.
"""

from __future__ import annotations

import ast

from tests.architecture.test_layers import _graph, _modules


def _imports_pyspark(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pyspark":
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pyspark" for a in node.names):
            return True
    return False


def test_only_the_spark_package_imports_pyspark() -> None:
    wrong = [
        mod
        for mod, path in _modules().items()
        if not mod.startswith("aisle.recs.spark") and _imports_pyspark(ast.parse(path.read_text()))
    ]
    assert not wrong, "pyspark imported outside aisle.recs.spark: " + ", ".join(sorted(wrong))


def test_only_the_command_line_imports_the_spark_package() -> None:
    wrong = [
        f"{mod} -> {target}"
        for mod, targets in _graph().items()
        for target in targets
        if target.startswith("aisle.recs.spark") and not mod.startswith(("aisle.recs.spark", "aisle.cli"))
    ]
    assert not wrong, "aisle.recs.spark imported outside the command line:\n" + "\n".join(sorted(wrong))
