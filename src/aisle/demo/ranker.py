"""The demo tenants' learned rankers, for ``aisle demo``: Home Depot, trained on its dev judgments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aisle.core.tenancy import Tenants
from aisle.search.ranking.features import FEATURES
from aisle.search.ranking.store import RankerStore

#: tenant -> judgments file under the shared data folder
DEMO_JUDGMENTS = {"homedepot": "homedepot/judgments_dev.csv"}


def train_demo_rankers(
    tenants: Tenants, data_dir: Path, shared_data: Path | None, echo: Callable[[str], None] = print
) -> None:
    """Train (once) each demo tenant's ranker on its judgments and put it in use.

    Idempotent: a tenant whose ranker in use was trained on today's feature set is left alone. The
    first run costs one search per judged query plus the boosting (a few minutes for Home Depot's
    5,956 queries on 2 cores); cross-validation is left to ``aisle ranker train`` and ``make bench``.
    """
    from aisle.search.evaluation import load_judgments
    from aisle.search.training.ranker import train_ranker

    store = RankerStore(tenants.store, check_every=0)
    for tenant, rel in DEMO_JUDGMENTS.items():
        path = shared_data / rel if shared_data is not None else None
        if path is None or not path.exists() or not tenants.exists(tenant):
            echo(f"{tenant}: judgments or tenant not available, search ranker skipped")
            continue
        current = store.current(tenant)
        if current is not None and current.record.features == list(FEATURES):
            echo(f"{tenant}: search ranker v{current.version} in use")
            continue

        def progress(line: str, tenant: str = tenant) -> None:
            echo(f"{tenant}: ranker {line}")

        record = train_ranker(tenants, tenant, data_dir, load_judgments(path), folds=0, progress=progress)
        echo(f"{tenant}: search ranker v{record.version} trained on {record.queries} judged queries, in use")
