"""Demo tenants built from real public data sets (see ``../shared/data/README.md``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel


@dataclass(frozen=True)
class DemoDataset:
    """A demo tenant: its five configuration files and how to produce its catalog file.

    ``prepare(data_dir, workdir)`` returns the catalog file to import, or None (with a reason
    printed by the caller) when the source data is absent.
    """

    tenant: str
    description: str
    configs: Callable[[], dict[str, BaseModel]]
    prepare: Callable[[Path | None, Path], Path | None]


def demo_datasets() -> list[DemoDataset]:
    from aisle.catalog.datasets import completejourney, fashion, homedepot, yoochoose

    return [fashion.DATASET, homedepot.DATASET, completejourney.DATASET, yoochoose.DATASET]
