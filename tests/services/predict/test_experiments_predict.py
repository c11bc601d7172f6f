"""A/B experiments on recommendations: the visitor's variant of a container (another model in a slot,
the saved rules off) served by POST /predict, named in the answer and in the logged answer."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from fastapi.testclient import TestClient
from tests.services.predict.conftest import SESSIONS
from tests.support.recs import CooccurrenceRecommender, register_and_deploy

from aisle.analytics.log import ParquetLog
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.assignment import assign
from aisle.experiments.model import ExperimentBody
from aisle.experiments.store import ExperimentStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

OTHER = [["p0", "p9"]] * 5 + [["p0", "p10"]] * 4 + [["p0", "p11"]] * 3


def test_each_visitor_gets_their_variants_container(settings: Settings, shop: str, tmp_path: Path) -> None:
    store = open_blob_store(settings.storage_url)
    register_and_deploy(store, shop, "m2", ModelType.CUSTOMERS_ALSO_VIEW)
    experiments = ExperimentStore(Tenants(store).scope(shop))
    body = ExperimentBody.model_validate(
        {
            "name": "Other model",
            "surface": "recommendations",
            "variants": [
                {"id": "control"},
                {"id": "b", "changes": {"containers": {"c1": {"slots": {"0": "m2"}}}}},
            ],
        }
    )
    draft = experiments.create(body)
    running = experiments.transition(draft.id, "started", "running", ("draft",))
    models = {"m1": CooccurrenceRecommender(SESSIONS), "m2": CooccurrenceRecommender(OTHER)}
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: models[record.model_id]))
    served: dict[str, tuple[str, list[str], str]] = {}
    with TestClient(app) as client:
        for n in range(40):
            visitor = f"v{n}"
            body_ = {"containerId": "c1", "productIds": ["p0"], "visitorId": visitor}
            got = client.post("/predict", params={"tenant": shop}, json=body_).json()
            variant = assign(running, visitor).id
            assert got["experiments"] == [{"experimentId": draft.id, "variantId": variant}]
            items = [i["id"] for i in got["response_data"]]
            assert items[:3] == (["p9", "p10", "p11"] if variant == "b" else ["p1", "p2", "p3"])
            served[got["attributionToken"]] = (variant, items, visitor)
        anonymous = client.post(
            "/predict", params={"tenant": shop}, json={"containerId": "c1", "productIds": ["p0"]}
        )
        assert "experiments" not in anonymous.json()  # no visitor: the control, untagged
        assert anonymous.json()["response_data"][0]["id"] == "p1"
    assert {v for v, _, _ in served.values()} == {"control", "b"}
    log = ParquetLog(store, tmp_path / "cache")
    days = log.days(shop, "answers")
    rows = {
        r["token"]: r
        for f in log.files(shop, "answers", days[0], days[-1])
        for r in pq.read_table(f).to_pylist()
    }
    for token, (variant, items, _visitor) in served.items():
        row = rows[token]
        assert row["variant"] == f"{draft.id}:{variant}"
        assert row["models"] == (["m2"] if variant == "b" else ["m1"])
        assert row["product_ids"] == items
