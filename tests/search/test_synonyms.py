"""Synonym tables: matched longest first, built once per configuration by the stage that owns them."""

from __future__ import annotations

from aisle.core.tenant_config import GlobalConfiguration, Synonym
from aisle.search.stages.understand import Understand
from aisle.search.synonyms import SynonymTables


def _config(*synonyms: Synonym) -> GlobalConfiguration:
    return GlobalConfiguration(synonyms=list(synonyms))


def test_two_way_and_one_way_synonyms_match_longest_first() -> None:
    config = _config(Synonym(terms=["T-Shirt", "tee"]), Synonym(from_="running shoes", to=["sneakers"]))
    table = SynonymTables().table(config)
    assert table.match(["t", "shirt", "red"], 0) == (2, ["tee"])
    assert table.match(["tee"], 0) == (1, ["t shirt"])
    assert table.match(["red", "running", "shoes"], 1) == (2, ["sneakers"])
    assert table.match(["sneakers"], 0) == (0, [])  # one way only


def test_a_table_is_built_once_per_configuration_and_owned_by_its_stage() -> None:
    tables = SynonymTables()
    config = _config(Synonym(terms=["tee", "t shirt"]))
    assert tables.table(config) is tables.table(config)
    changed = _config(Synonym(terms=["tee", "top"]))  # a reloaded configuration: a new object
    assert tables.table(changed).match(["tee"], 0) == (1, ["top"])
    # each pipeline's understanding stage holds its own tables: nothing shared through the module
    assert Understand().synonyms is not Understand().synonyms
    assert Understand(tables).synonyms is tables
