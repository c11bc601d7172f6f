"""The edit service over its ASGI app: models, jobs, containers, events, user features."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.waiting import wait_until

from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.jobs import JobStore

T = {"tenant": "shop"}
SLOT = {"slotConfigId": "main", "modelId": "live", "itemCount": 5}


def wait_job(client: TestClient, job_id: str) -> dict[str, Any]:
    """The job once it completed or failed."""

    def ended() -> dict[str, Any] | None:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}", params=T).json()
        return job if job["status"] in ("completed", "failed") else None

    return wait_until(ended, f"job {job_id} ends", every=0.02)


def test_models_list_filter_get(client: TestClient) -> None:
    models = client.get("/models", params=T).json()["models"]
    assert {m["model_id"] for m in models} == {"live", "fresh", "broken"}
    only = client.get("/models", params={**T, "modelType": "CUSTOMERS_ALSO_VIEW"}).json()["models"]
    assert [m["model_id"] for m in only] == ["live"] and only[0]["deployment"]["status"] == "deployed"
    assert client.get("/models", params={**T, "pageType": "checkout"}).json()["models"] == []
    assert client.get("/models/fresh", params=T).json()["deployment"] is None
    r = client.get("/models/zzz", params=T)
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


def test_deploy_job_runs_to_completed_and_model_becomes_deployed(client: TestClient, loader: Any) -> None:
    r = client.post("/models/fresh/deploy", params=T)
    assert r.status_code == 202 and r.json()["status"] == "accepted"
    job = wait_job(client, r.json()["jobId"])
    assert (job["status"], job["percent"], job["message"]) == ("completed", 100, "completed")
    # warmed with the catalog's first three products: p0 -> p1 p2, p1 -> p0 p3, p2 -> p0 (SESSIONS)
    assert job["result"]["warmupItems"] == 5 and loader.calls == ["fresh"]
    assert client.get("/models/fresh", params=T).json()["deployment"]["status"] == "deployed"


def test_unfinished_jobs_are_listed_oldest_first_until_they_end(
    settings: Any, store: BlobStore, loader: Any
) -> None:
    """``GET /jobs``: what a console shows as running though another client started it."""
    import threading

    from aisle.services.edit.app import create_app

    release = threading.Event()

    def slow(scope: BlobStore, record: Any) -> Any:  # a deploy held in progress until released
        release.wait(30)
        return loader(scope, record)

    with TestClient(create_app(settings, loader=slow, job_poll_s=0.05)) as c:
        assert c.get("/jobs", params=T).json() == {"jobs": []}
        first = c.post("/models/fresh/deploy", params=T).json()["jobId"]
        second = c.post("/models/broken/deploy", params=T).json()["jobId"]
        listed = c.get("/jobs", params=T).json()["jobs"]
        assert [j["jobId"] for j in listed] == [first, second]
        assert [(j["kind"], j["modelId"]) for j in listed] == [("deploy", "fresh"), ("deploy", "broken")]
        assert {j["status"] for j in listed} <= {"accepted", "in_progress"}
        release.set()
        wait_job(c, first), wait_job(c, second)
        assert c.get("/jobs", params=T).json() == {"jobs": []}
        r = c.get("/jobs", params={"tenant": "nope"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "tenant_not_found"


def test_failed_deploy_reports_failed(client: TestClient) -> None:
    job = wait_job(client, client.post("/models/broken/deploy", params=T).json()["jobId"])
    assert job["status"] == "failed" and "corrupt" in job["message"]
    assert client.get("/models/broken", params=T).json()["deployment"] is None


def test_attach_undeployed_and_undeploy_attached_are_refused(client: TestClient) -> None:
    r = client.post("/containers", params=T, json={"containerId": "c", "slotConfigurations": [
        {"slotConfigId": "s", "modelId": "fresh"}]})  # fmt: skip
    assert r.status_code == 409 and r.json()["error"]["code"] == "model_not_deployed"
    assert "fresh" in r.json()["error"]["message"]
    for cid in ("c1", "c2"):
        assert client.post(
            "/containers", params=T, json={"containerId": cid, "slotConfigurations": [SLOT]}
        ).is_success
    r = client.post("/models/live/undeploy", params=T)
    assert r.status_code == 409 and r.json()["error"]["details"]["containers"] == ["c1", "c2"]
    client.delete("/containers/c1", params=T)
    client.delete("/containers/c2", params=T)
    job = wait_job(client, client.post("/models/live/undeploy", params=T).json()["jobId"])
    assert job["status"] == "completed"
    assert client.get("/models/live", params=T).json()["deployment"]["status"] == "undeployed"


def test_container_crud_and_versions(client: TestClient) -> None:
    body = {"containerId": "home", "name": "Home page", "slotConfigurations": [SLOT]}
    created = client.post("/containers", params=T, json=body)
    assert created.status_code == 201 and created.json()["version"] == 1
    assert client.post("/containers", params=T, json=body).json()["error"]["code"] == "container_exists"
    replace = {"version": 1, "name": "Home v2", "slotConfigurations": [{**SLOT, "itemCount": 3}]}
    r = client.put("/containers/home", params=T, json=replace)
    assert r.status_code == 200 and r.json()["version"] == 2
    stale = client.put("/containers/home", params=T, json={**replace, "name": "lost"})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "container_version_conflict"
    got = client.get("/containers/home", params=T).json()
    assert (got["name"], got["version"], got["slotConfigurations"][0]["itemCount"]) == ("Home v2", 2, 3)
    assert [c["containerId"] for c in client.get("/containers", params=T).json()] == ["home"]
    assert client.delete("/containers/home", params=T).status_code == 204
    assert client.get("/containers/home", params=T).status_code == 404
    assert client.put("/containers/home", params=T, json=replace).status_code == 404


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"containerId": "x", "slotConfigurations": []}, 422, "validation_error"),
        ({"containerId": "x", "slotConfigurations": [SLOT, SLOT]}, 400, "value_invalid"),  # schema-valid
        ({"containerId": "bad id!", "slotConfigurations": [SLOT]}, 422, "validation_error"),
        ({"containerId": "x", "slotConfigurations": [{**SLOT, "itemCount": 0}]}, 422, "validation_error"),
    ],
)
def test_invalid_containers_are_refused(
    client: TestClient, body: dict[str, Any], status: int, code: str
) -> None:
    r = client.post("/containers", params=T, json=body)
    assert r.status_code == status and r.json()["error"]["code"] == code
    assert client.get("/containers", params=T).json() == []


def test_events_single_batch_and_read_back(client: TestClient) -> None:
    one = {"visitorId": "v1", "eventType": "view", "productId": "p1", "timestamp": "2019-10-01T00:00:00Z"}
    assert client.post("/events", params=T, json=one).json() == {"accepted": 1}
    batch = {"events": [
        {"visitorId": "v1", "eventType": "cart", "productId": "p2", "timestamp": 1569888060, "quantity": 1},
        {"visitorId": "v1", "eventType": "purchase", "productId": "p2", "timestamp": 1569888120, "price": 9.5,
         "userId": "u1", "sessionId": "s1"},
    ]}  # fmt: skip
    assert client.post("/events", params=T, json=batch).json() == {"accepted": 2}
    got = client.get("/events", params={**T, "visitorId": "v1"}).json()["events"]
    assert [(e["eventType"], e["productId"]) for e in got] == [
        ("purchase", "p2"),
        ("cart", "p2"),
        ("view", "p1"),
    ]
    assert got[2]["timestamp"] == 1569888000.0 and got[0]["userId"] == "u1"
    assert len(client.get("/events", params={**T, "visitorId": "v1", "limit": 1}).json()["events"]) == 1
    assert client.get("/events", params={**T, "visitorId": "nobody"}).json()["events"] == []


def test_event_validation(client: TestClient) -> None:
    r = client.post(
        "/events", params=T, json={"visitorId": "v", "eventType": "like", "productId": "p", "timestamp": 1}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "event_type_unknown"
    assert "view" in r.json()["error"]["message"]
    for bad in ({"visitorId": "v", "eventType": "view", "productId": "p"}, {"events": []}, {"events": "x"}):
        assert client.post("/events", params=T, json=bad).status_code == 422
    assert client.get("/events/types", params=T).json() == {
        "eventTypes": ["view", "cart", "purchase", "click"]
    }


def test_user_features(client: TestClient) -> None:
    body = {"userId": "u1", "features": {"brand_affinity": {"nike": 0.9}}}
    assert client.post("/user_features", params=T, json=body).json() == {"userId": "u1", "stored": True}
    bad = {"userId": "u1", "features": {"brand_affinity": {"nike": "very"}}}
    r = client.post("/user_features", params=T, json=bad)
    assert r.status_code == 400 and r.json()["error"]["code"] == "value_invalid"


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/models"), ("get", "/containers"), ("get", "/events/types"), ("get", "/jobs/x"),
     ("post", "/models/live/deploy")],
)  # fmt: skip
def test_tenant_is_required_and_must_exist(client: TestClient, method: str, path: str) -> None:
    missing = client.request(method, path)
    assert missing.status_code == 422 and "tenant" in missing.json()["error"]["message"]
    unknown = client.request(method, path, params={"tenant": "nope"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "tenant_not_found"
    assert client.get("/health").json()["service"] == "edit"


def test_job_accepted_before_a_restart_completes_after_it(
    settings: Any, store: BlobStore, loader: Any
) -> None:
    from aisle.services.edit.app import create_app

    job = JobStore(Tenants(store).scope("shop"), "shop").submit("deploy", "fresh")  # its service then stopped
    with TestClient(create_app(settings, loader=loader, job_poll_s=0.05)) as restarted:
        assert wait_job(restarted, job.jobId)["status"] == "completed"
    assert loader.calls == ["fresh"]


def test_two_replicas_run_a_deploy_once(settings: Any, store: BlobStore, loader: Any) -> None:
    from aisle.services.edit.app import create_app

    with (
        TestClient(create_app(settings, loader=loader, job_poll_s=0.01)) as a,
        TestClient(create_app(settings, loader=loader, job_poll_s=0.01)) as b,
    ):
        job_id = a.post("/models/fresh/deploy", params=T).json()["jobId"]
        assert wait_job(b, job_id)["status"] == "completed"
        time.sleep(0.2)
    assert loader.calls == ["fresh"]


def test_auth_is_wired(settings: Any, store: BlobStore, loader: Any) -> None:
    from tests.support.auth import AuthKit

    from aisle.services.edit.app import create_app

    kit = AuthKit(store)
    app = create_app(
        kit.settings(storage_url=settings.storage_url, data_dir=settings.data_dir), loader=loader
    )
    reader = {"authorization": f"Bearer {kit.token(['shop'], scopes=['recs:read'])}"}
    writer = {"authorization": f"Bearer {kit.token(['shop'], scopes=['recs:read', 'recs:write'])}"}
    body = {"containerId": "c", "slotConfigurations": [SLOT]}
    with TestClient(app) as c:
        assert c.get("/containers", params=T).status_code == 401
        assert c.get("/containers", params=T, headers=reader).status_code == 200
        assert c.post("/containers", params=T, json=body, headers=reader).status_code == 403
        assert c.post("/containers", params=T, json=body, headers=writer).status_code == 201
        other = {"authorization": f"Bearer {kit.token(['other'], scopes=['recs:read'])}"}
        assert c.get("/containers", params=T, headers=other).status_code == 403
        assert c.get("/health").status_code == 200 and c.get("/docs").status_code == 200


def test_recommendation_rules_are_versioned_with_the_container(client: TestClient) -> None:
    only_nike = {"type": "FILTER", "condition": {"op": "eq", "field": "brand", "value": "nike"}}
    created = client.post("/containers", params=T, json={"containerId": "rr", "slotConfigurations": [SLOT]})
    assert created.status_code == 201 and created.json()["recommendationRules"] == []
    body = {**created.json(), "recommendationRules": [only_nike]}
    replaced = client.put("/containers/rr", params=T, json=body)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["version"] == 2
    assert replaced.json()["recommendationRules"][0]["condition"] == only_nike["condition"]
    # a rule naming a slot the container does not have: 400, nothing written
    stray = {**replaced.json(), "recommendationRules": [{**only_nike, "slotConfigId": "nope"}]}
    r = client.put("/containers/rr", params=T, json=stray)
    assert r.status_code == 400 and r.json()["error"]["code"] == "value_invalid"
    assert r.json()["error"]["details"][0]["field"] == "body.recommendationRules.0.slotConfigId"
    # a condition on a field the catalog does not have: 400 naming it, nothing written
    colour = {
        "type": "BOOST",
        "condition": {"op": "not", "condition": {"op": "eq", "field": "colour", "value": "red"}},
    }
    r = client.put(
        "/containers/rr", params=T, json={**replaced.json(), "recommendationRules": [only_nike, colour]}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "condition_field_unknown", r.text
    assert r.json()["error"]["details"][0]["field"] == "body.recommendationRules.1.condition"
    assert "'colour' is not a catalog field" in r.json()["error"]["message"]
    bad_op = {**replaced.json(), "recommendationRules": [{"type": "FILTER", "condition": {"op": "like"}}]}
    assert client.put("/containers/rr", params=T, json=bad_op).status_code == 422
    assert client.get("/containers/rr", params=T).json()["version"] == 2


def test_clicks_with_attribution_reach_the_outbox(client: TestClient, settings: Settings) -> None:
    from aisle.core.events import open_event_store

    click = {"visitorId": "v9", "eventType": "click", "productId": "p1", "timestamp": 1_700_000_000,
             "attributionToken": "tok-1", "position": 2, "eventId": "e-1"}  # fmt: skip
    buy = {"visitorId": "v9", "eventType": "purchase", "productId": "p1", "timestamp": 1_700_000_100,
           "price": 9.5, "quantity": 2}  # fmt: skip
    r = client.post("/events", params=T, json={"events": [click, buy]})
    assert r.status_code == 202, r.text
    stored = client.get("/events", params={**T, "visitorId": "v9"}).json()["events"]
    assert [(e["eventType"], e["attributionToken"], e["position"]) for e in stored] == [
        ("purchase", None, None),
        ("click", "tok-1", 2),
    ]
    assert stored[1]["eventId"] == "e-1" and stored[0]["eventId"]  # a missing id is given one
    events = open_event_store(settings)  # the store every process of this data dir shares
    outbox = [e for _, e in events.outbox(T["tenant"], 10)]
    events.close()
    assert [(e.event_type, e.event_id) for e in outbox] == [
        ("click", "e-1"),
        ("purchase", stored[0]["eventId"]),
    ]


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"position": 3}, 400, "value_invalid"),  # a position in no answer
        ({"attributionToken": "has space"}, 422, "validation_error"),
        ({"attributionToken": "x" * 129}, 422, "validation_error"),
        ({"attributionToken": "t", "position": 0}, 422, "validation_error"),
    ],
)
def test_attribution_fields_are_validated(
    client: TestClient, change: dict[str, object], status: int, code: str
) -> None:
    event = {"visitorId": "v", "eventType": "click", "productId": "p1", "timestamp": 1_700_000_000, **change}
    r = client.post("/events", params=T, json=event)
    assert r.status_code == status and r.json()["error"]["code"] == code, r.text
