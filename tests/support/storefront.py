"""The storefront behind real services, for browser tests and ``bench_storefront``: search (serving
``/shop/``), predict, edit and analytics over a copy of the small fashion tenant with photos and photo
vectors (:func:`tests.support.vectors.mini_fashion`) and a small Home Depot tenant (titles only, no
photo, no facet: the first :data:`HOMEDEPOT_ROWS` products and the dev query log for autocomplete), auth
on (:class:`AuthKit`), two containers with the demo ids: ``similar-items`` served by a co-occurrence
model, ``good-better-best`` by :class:`TieredRecommender` (three price tiers labelled good, better and
best); analytics written every 0.2 s.
"""

from __future__ import annotations

import csv
import itertools
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.auth import AuthKit, serve
from tests.support.recs import CooccurrenceRecommender, register_and_deploy
from tests.support.vectors import MiniTenant, mini_fashion

from aisle.catalog.store import CatalogStore
from aisle.core.auth.scopes import ANALYTICS_READ
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType, RecContext, Recommender, Scored
from aisle.recs.registry import ModelRecord
from aisle.recs.serving import RegistryModelSource
from aisle.services.search import shop

CONTAINERS = ("similar-items", "good-better-best")
HOMEDEPOT_ROWS = 3000
"""Home Depot products of the small tenant: the first rows of ``products.csv`` (41 drills among them)."""


class TieredRecommender:
    """GOOD_BETTER_BEST's shape without its training: of the ten products after the seed in catalog order,
    the cheapest, the middle and the dearest, labelled good, better and best, and given best first (the
    model gives them cheapest first: the page orders them itself)."""

    model_type = ModelType.GOOD_BETTER_BEST

    def __init__(self, ids: list[str], prices: dict[str, float]) -> None:
        self.ids = ids
        self.prices = prices

    def recommend(self, ctx: RecContext) -> list[Scored]:
        if not ctx.seeds or ctx.seeds[0] not in self.prices:
            return []
        at = self.ids.index(ctx.seeds[0])
        near = [self.ids[(at + k) % len(self.ids)] for k in range(1, 11)]
        ranked = sorted(
            (i for i in near if i in self.prices and i not in ctx.exclude), key=lambda i: (self.prices[i], i)
        )
        if len(ranked) < 3:
            return []
        good, better, best = ranked[0], ranked[len(ranked) // 2], ranked[-1]
        return [Scored(best, 3.0, "best"), Scored(good, 1.0, "good"), Scored(better, 2.0, "better")]


@dataclass
class StorefrontEnv:
    """Base URLs of the running services, the tenant, a token for the analytics API, the settings."""

    search: str
    analytics: str
    edit: str
    tenant: MiniTenant
    analytics_token: str
    settings: Settings


def bundle_built() -> bool:
    """Whether ``make install`` has bundled the storefront's script."""
    return (shop.ASSETS / "app.js").is_file()


def mini_homedepot(tenants: Tenants, root: Path, shared_data: Path, rows: int = HOMEDEPOT_ROWS) -> None:
    """The ``homedepot`` tenant in ``tenants``: the first ``rows`` products of the shared catalog (written
    under ``root``) and its dev queries as the autocomplete query log; indexed on its first search."""
    from aisle.catalog.datasets import homedepot
    from aisle.catalog.importer import import_catalog
    from aisle.search.querylog import import_query_log

    source = shared_data / "homedepot"
    catalog = root / "homedepot.csv"
    with (
        (source / "products.csv").open(encoding="utf-8", newline="") as fh,
        catalog.open("w", encoding="utf-8", newline="") as out,
    ):
        csv.writer(out).writerows(itertools.islice(csv.reader(fh), rows + 1))  # the header and the rows
    tenants.write_config("homedepot", homedepot.configs())
    import_catalog(tenants, "homedepot", catalog)
    import_query_log(tenants, "homedepot", source / "queries_dev.txt")


@contextmanager
def storefront_env(root: Path, shared_data: Path, mini_root: Path) -> Iterator[StorefrontEnv]:
    """Services over a copy (under ``root``) of the mini fashion tenant built (once) under ``mini_root``."""
    from aisle.services.analytics.app import create_app as analytics_app
    from aisle.services.edit.app import create_app as edit_app
    from aisle.services.predict.app import create_app as predict_app
    from aisle.services.search.app import create_app as search_app

    mini = mini_fashion(mini_root, shared_data)
    bucket = root / "bucket"
    shutil.copytree(Path(mini.storage_url.removeprefix("file://")), bucket)
    store = open_blob_store(f"file://{bucket}")
    ids = mini.ids
    # each product's neighbours: the next ten of the catalog (a stand-in model with real product ids)
    baskets = [[ids[i], ids[(i + k) % len(ids)]] for i in range(len(ids)) for k in range(1, 11)]
    model = CooccurrenceRecommender(baskets)
    products = CatalogStore(Tenants(store).scope("fashion")).load().products
    prices = {
        str(i): float(p) for i, p in zip(products["id"], products["price"], strict=True) if p is not None
    }
    models = {"similar-items": model, "good-better-best": TieredRecommender(ids, prices)}
    mini_homedepot(Tenants(store, ttl=0), root, shared_data)
    scope = Tenants(store).scope("fashion")
    for container_id in CONTAINERS:
        register_and_deploy(store, "fashion", container_id, models[container_id].model_type)
        slot = {"slotConfigId": "main", "modelId": container_id, "itemCount": 8}
        ContainerStore(scope).create(
            container_id, ContainerBody.model_validate({"slotConfigurations": [slot]})
        )
    kit = AuthKit(store, auth_url="http://127.0.0.1:9")
    base = {
        "storage_url": f"file://{bucket}",
        "data_dir": root / "data",
        "photos_dir": shared_data,
        "analytics_flush_seconds": 0.2,
        "container_cache_seconds": 0,
    }
    with ExitStack() as stack:

        def loader(scope: BlobStore, record: ModelRecord) -> Recommender:
            return models[record.model_id]

        source = RegistryModelSource(loader)
        predict = stack.enter_context(serve(predict_app(kit.settings(**base), models=source)))
        edit = stack.enter_context(serve(edit_app(kit.settings(**base), loader=loader, job_poll_s=0.05)))
        analytics = stack.enter_context(serve(analytics_app(kit.settings(**base))))
        settings = kit.settings(
            **base,
            predict_url=predict,
            edit_url=edit,
            analytics_url=analytics,
            storefront_tenants="fashion,homedepot",
        )
        search = stack.enter_context(serve(search_app(settings)))
        yield StorefrontEnv(
            search=search,
            analytics=analytics,
            edit=edit,
            tenant=mini,
            analytics_token=kit.token(["fashion"], [ANALYTICS_READ]),
            settings=settings,
        )
