"""The unknown-parameter guard: one per app, made by the factory, refusing what a route does not declare."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.services.common.app import service_app
from aisle.services.common.params import QueryParamGuard, declared_query_params


def _router() -> APIRouter:
    router = APIRouter()

    @router.get("/things")
    def things(
        size: Annotated[int, Query()] = 1, from_: Annotated[int, Query(alias="from")] = 0
    ) -> dict[str, int]:
        return {"size": size, "from": from_}

    return router


def test_an_undeclared_parameter_is_a_400_naming_the_declared_ones(settings: Settings) -> None:
    app = service_app("search", title="t", description="d", routers=[_router()], settings=settings)
    with TestClient(app) as client:
        assert client.get("/things", params={"size": 2, "from": 3}).json() == {"size": 2, "from": 3}
        refused = client.get("/things", params={"sise": 2})
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["code"] == "unknown_parameter"
        assert error["details"] == {"unknown": ["sise"], "allowed": ["from", "size", "tenant"]}


def test_each_guard_keeps_its_own_routes_declared_parameters() -> None:
    route = _router().routes[0]
    guard = QueryParamGuard()
    assert guard.declared(route) == declared_query_params(route) == {"size", "from", "tenant"}
    assert guard.declared(route) is guard.declared(route)  # worked out once
    assert QueryParamGuard().declared(route) is not guard.declared(route)  # nothing shared between apps
