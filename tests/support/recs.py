"""Building blocks for tests and benchmarks of recommendations (``from tests.support.recs import ...``).

:class:`CooccurrenceRecommender` is a tiny but real item-to-item model (counts of items seen together
in sessions); :func:`write_tenant` creates a tenant with its five configuration files and a catalog;
:func:`register_and_deploy` records a model and marks it deployed without a job; :func:`rees46_catalog`
makes a catalog of the products seen in REES46 events; :func:`small_tenant` makes a bucket holding a
small tenant ``shop`` ready for every recommendation service.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl

from aisle.catalog.store import CatalogStore
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import (
    Attribute,
    AttributeConfiguration,
    AutocompleteConfiguration,
    CrsConfig,
    GlobalConfiguration,
    UserGroupConfiguration,
)
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.deployments import Deployment, Deployments
from aisle.recs.models.base import ModelType, RecContext, Scored
from aisle.recs.registry import ArtifactWriter, ModelRecord, ModelRegistry


class CooccurrenceRecommender:
    """Scores ``c`` by how often it shared a session with the seeds and the visitor's session items.

    ``score(c) = sum_{s in seeds} n(s, c) + 0.5 * sum_{i in session} n(i, c)``; ties by item id.
    """

    def __init__(
        self, sessions: Iterable[Sequence[str]], model_type: ModelType = ModelType.CUSTOMERS_ALSO_VIEW
    ):
        self.model_type = model_type
        self.pairs: dict[str, dict[str, float]] = defaultdict(dict)
        for session in sessions:
            items = list(dict.fromkeys(session))
            for a in items:
                for b in items:
                    if a != b:
                        self.pairs[a][b] = self.pairs[a].get(b, 0.0) + 1.0

    def recommend(self, ctx: RecContext) -> list[Scored]:
        scores: dict[str, float] = defaultdict(float)
        for weight, items in ((1.0, ctx.seeds), (0.5, ctx.session)):
            for item in items:
                for other, n in self.pairs.get(item, {}).items():
                    scores[other] += weight * n
        skip = set(ctx.seeds) | ctx.exclude
        ranked = sorted((c for c in scores if c not in skip), key=lambda c: (-scores[c], c))
        if ctx.allowed is not None:
            ranked = [c for c in ranked if ctx.allowed(c)]
        return [Scored(c, scores[c]) for c in ranked[: ctx.k]]


def write_tenant(
    store: BlobStore,
    tenant: str,
    products: pl.DataFrame,
    *,
    event_types: list[str] | None = None,
    attributes: list[Attribute] | None = None,
) -> None:
    """Create ``tenant`` with default configuration files and ``products`` as its catalog.

    ``products`` needs ``id`` and ``title``; ``description``, ``price``, ``brand``, ``category`` get
    their roles when present.
    """
    roles = {"title": "title", "description": "description", "price": "price", "brand": "brand"}
    if attributes is None:
        attributes = [
            Attribute(
                name=c,
                role=roles.get(c) if c in roles else ("category" if c == "category" else None),  # type: ignore[arg-type]
                type="number" if c == "price" else ("category_path" if c == "category" else "keyword"),  # type: ignore[arg-type]
            )
            for c in products.columns
            if c != "id"
        ]
    Tenants(store).write_config(
        tenant,
        {
            "attribute_configuration.json": AttributeConfiguration(attributes=attributes),
            "autocomplete_configuration.json": AutocompleteConfiguration(),
            "crs_config.json": CrsConfig(),
            "global_configuration.json": GlobalConfiguration(
                event_types=event_types or ["view", "add_to_cart", "purchase"]
            ),
            "user_group_configuration.json": UserGroupConfiguration(),
        },
    )
    CatalogStore(Tenants(store).scope(tenant)).write(products, source="test")


def register_and_deploy(
    store: BlobStore, tenant: str, model_id: str, model_type: ModelType, *, deploy: bool = True
) -> ModelRecord:
    """Register a model with a placeholder artifact (tests load it with their own loader)."""
    scope = Tenants(store).scope(tenant)
    registry = ModelRegistry(scope)
    version = registry.next_version(model_id)
    writer = ArtifactWriter(scope, model_id, version)
    writer.put_json("meta.json", {"test": True})
    record = ModelRecord(
        model_id=model_id,
        tenant=tenant,
        model_type=model_type,
        version=version,
        artifact_uri=writer.uri,
        metrics={"hr@20": 0.5},
    )
    registry.register(record)
    if deploy:
        Deployments(scope).write(
            Deployment(modelId=model_id, status="deployed", modelVersion=version, jobId=f"test-{version}")
        )
    return record


def write_shop(store: BlobStore, tenant: str, products: pl.DataFrame, event_types: list[str]) -> None:
    """``tenant`` with ``products``, a deployed CUSTOMERS_ALSO_VIEW model ``m1`` and a container ``c1``
    serving 4 of its items from slot ``main``."""

    write_tenant(store, tenant, products, event_types=event_types)
    register_and_deploy(store, tenant, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}
    ContainerStore(Tenants(store).scope(tenant)).create(
        "c1", ContainerBody.model_validate({"slotConfigurations": [slot]})
    )


def rees46_catalog(events: pl.DataFrame) -> pl.DataFrame:
    """``id, title, price, brand, category`` of every product in REES46 ``events`` (first event wins;
    REES46 has no product names, so the title is the brand and the id)."""
    return (
        events.group_by("product_id", maintain_order=True)
        .agg(pl.col("brand").first(), pl.col("price").first(), pl.col("category_code").first())
        .select(
            pl.col("product_id").alias("id"),
            pl.concat_str([pl.col("brand").fill_null("unbranded"), pl.lit(" "), pl.col("product_id")]).alias(
                "title"
            ),
            pl.col("price"),
            pl.col("brand"),
            pl.col("category_code").alias("category"),
        )
    )


SMALL_PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(8)],
        "title": [f"Product {i}" for i in range(8)],
        "price": [float(10 * (i + 1)) for i in range(8)],
        "brand": ["nike", "puma"] * 4,
        "category": ["shoes"] * 4 + ["bags"] * 4,
    }
)


def small_tenant(tmp: Path) -> Settings:
    """A bucket with tenant ``shop``: 8 products, a deployed model ``m1`` and a container ``c1``."""
    settings = Settings(auth="off", storage_url=f"file://{tmp / 'bucket'}", data_dir=tmp / "data")
    write_shop(open_blob_store(settings.storage_url), "shop", SMALL_PRODUCTS, ["view", "cart", "purchase"])
    return settings
