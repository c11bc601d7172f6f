"""The search pipeline's fallback stage against a real Typesense server (crs_config.json).

Every test using ``shop`` runs twice: the search in a worker thread (``SearchPipeline.search``, the
blocking call) and on an event loop (the same stage loop, ``SearchPipeline.search_steps``, driven by
``awaited``: the call awaited, issue 32); the deadline, breaker, slots and cache behave the same on both."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.search.external.contract import RUNNING
from tests.support.external import KEY_ENV, crs_config, load_external, set_crs, write_outdoor_tenant
from tests.support.sockets import Relay, free_port, silent_server

from aisle.core.crs_config import CrsConfig
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.demo.typesense_server import TypesenseServer
from aisle.search.context import SearchContext
from aisle.search.external.protocol import ExternalResult, ExternalSearch, ExternalSearchRequest
from aisle.search.external.registry import ExternalSearches
from aisle.search.external.resolver import open_external_search
from aisle.search.indexes import IndexRegistry
from aisle.search.model import SearchResult
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.stages.fallback import awaited

TENANT = "outdoor"


@dataclass
class Shop:
    tenants: Tenants
    indexes: IndexRegistry
    external: ExternalSearches
    url: str
    on_loop: bool = False

    def configure(self, crs: CrsConfig) -> None:
        set_crs(self.tenants.store, TENANT, crs)

    def search(self, query: str, pipeline: SearchPipeline | None = None, **options) -> SearchResult:  # type: ignore[no-untyped-def]
        pipeline = pipeline or SearchPipeline(default_stages(external=self.external), budget_s=2.0)
        index, config = self.indexes.get(TENANT), self.tenants.config(TENANT)
        if self.on_loop:
            return asyncio.run(awaited(pipeline.search_steps(index, config, SearchQuery(query, **options))))
        return pipeline.search(index, config, SearchQuery(query, **options))


@pytest.fixture(scope="module")
def loaded(typesense: TypesenseServer) -> TypesenseServer:
    load_external(typesense.url, typesense.api_key)
    return typesense


@pytest.fixture(params=["thread", "loop"])
def shop(
    request: pytest.FixtureRequest, tmp_path: Path, loaded: TypesenseServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Shop]:
    monkeypatch.setenv(KEY_ENV, loaded.api_key)
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    write_outdoor_tenant(store, TENANT, crs_config(loaded.url))
    tenants = Tenants(store, ttl=0)
    external = ExternalSearches()
    on_loop = request.param == "loop"
    yield Shop(tenants, IndexRegistry(tenants, tmp_path / "data"), external, loaded.url, on_loop)
    external.close()


def ids(result: SearchResult) -> list[str]:
    return [p["id"] for p in result.products]


def test_no_results_falls_back_to_the_external_service(shop: Shop) -> None:
    result = shop.search("socks")
    assert ids(result)[:1] == ["ext-3"]
    assert result.products[0]["brand"] == "Asics"  # fields from the external service
    graph = result.query_graph.external
    assert graph is not None and graph.status == "answered" and graph.reason == "no_results"
    assert graph.backend == "typesense" and graph.products == len(result.products)
    assert result.total == graph.total


def test_own_results_do_not_trigger_it(shop: Shop) -> None:
    result = shop.search("tent")
    assert set(ids(result)) == {"own-1", "own-2"}
    graph = result.query_graph.external
    assert graph is not None and (graph.status, graph.reason) == ("skipped", "not_triggered")


def test_few_results_append_after_own_without_repeats(shop: Shop) -> None:
    shop.configure(crs_config(shop.url, when=["few_results"], min_results=3, merge="append"))
    result = shop.search("headlamp")
    assert ids(result) == ["ext-11"] and result.total == 1  # the external match is the same product
    result = shop.search("running")
    assert ids(result)[0] == "own-6"
    assert set(ids(result)[1:]) == RUNNING and len(ids(result)) == 1 + len(RUNNING)
    assert result.total == 1 + len(RUNNING)
    assert result.query_graph.external is not None
    assert (result.query_graph.external.reason, result.query_graph.external.merge) == (
        "few_results",
        "append",
    )


def test_append_fills_only_the_rest_of_the_page(shop: Shop) -> None:
    shop.configure(crs_config(shop.url, when=["few_results"], min_results=3, merge="append"))
    result = shop.search("running", size=3)
    assert ids(result)[0] == "own-6" and len(ids(result)) == 3
    assert set(ids(result)[1:]) <= RUNNING
    assert result.total == 1 + len(RUNNING)


def test_routed_query_replaces_own_results(shop: Shop) -> None:
    shop.configure(crs_config(shop.url, when=["rule"], queries=["Headlamp"], merge="replace"))
    result = shop.search("headlamp", facets=["brand"])
    assert ids(result) == ["ext-11"]
    assert result.query_graph.external is not None
    assert (result.query_graph.external.reason, result.query_graph.external.merge) == ("rule", "replace")
    assert [f.value for f in result.facets["brand"]] == ["Petzl"]


def test_tenant_without_external_service_has_no_external_part(shop: Shop) -> None:
    shop.configure(CrsConfig())
    result = shop.search("socks")
    assert result.products == [] and result.query_graph.external is None


def test_answers_are_cached_briefly(shop: Shop) -> None:
    first = shop.search("socks")
    second = shop.search("socks")
    assert first.query_graph.external is not None and not first.query_graph.external.cached
    assert second.query_graph.external is not None and second.query_graph.external.cached
    assert ids(first) == ids(second)


def test_external_down_never_fails_the_search_and_the_breaker_opens(shop: Shop) -> None:
    shop.configure(crs_config(f"http://127.0.0.1:{free_port()}", breaker={"fail_max": 3}, cache_ttl_s=0))
    seen = []
    for _ in range(5):
        result = shop.search("socks")
        assert result.products == []
        assert result.query_graph.external is not None
        seen.append((result.query_graph.external.status, result.query_graph.external.code))
    assert seen[:3] == [("failed", "external_search_unavailable")] * 3
    assert seen[3:] == [("skipped", "external_search_unavailable")] * 2
    assert shop.external.states() == {TENANT: "open"}


def test_breaker_half_opens_after_the_pause_and_closes_on_success(shop: Shop) -> None:
    relay = Relay(int(shop.url.rsplit(":", 1)[1]))
    try:
        crs = crs_config(
            f"http://127.0.0.1:{relay.port}", breaker={"fail_max": 2, "reset_timeout_s": 0.3}, cache_ttl_s=0
        )
        shop.configure(crs)
        relay.down = True
        for _ in range(3):
            shop.search("socks")
        assert shop.external.states() == {TENANT: "open"}
        relay.down = False
        skipped = shop.search("socks").query_graph.external
        assert skipped is not None and skipped.reason == "breaker_open"
        time.sleep(0.35)
        result = shop.search("socks")
        assert result.query_graph.external is not None and result.query_graph.external.status == "answered"
        assert ids(result)[:1] == ["ext-3"]
        assert shop.external.states() == {TENANT: "closed"}
    finally:
        relay.close()


class Budgets:
    """Opens backends as the registry does and notes the ``timeout_s`` each search call is given."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    def open(self, crs: CrsConfig) -> ExternalSearch:
        backend = open_external_search(crs)
        search, search_async = backend.search, getattr(backend, "search_async", None)

        def noted(request: ExternalSearchRequest) -> ExternalResult:
            self.seen.append(request.timeout_s)
            return search(request)

        async def noted_async(request: ExternalSearchRequest) -> ExternalResult:
            self.seen.append(request.timeout_s)
            assert search_async is not None
            result: ExternalResult = await search_async(request)
            return result

        backend.search = noted  # type: ignore[method-assign]
        if search_async is not None:
            backend.search_async = noted_async  # type: ignore[attr-defined]
        return backend


def test_a_silent_service_costs_at_most_the_deadline(shop: Shop) -> None:
    budgets = Budgets()
    external = ExternalSearches(opener=budgets.open)
    try:
        with silent_server() as port:
            shop.configure(crs_config(f"http://127.0.0.1:{port}", timeout_ms=5000))
            pipeline = SearchPipeline(default_stages(external=external), budget_s=0.3)
            result = shop.search("socks", pipeline)
    finally:
        external.close()
    assert result.query_graph.external is not None
    assert (result.query_graph.external.status, result.query_graph.external.code) == (
        "failed",
        "external_search_timeout",
    )
    # one call, whose timeout was what was left of the 0.3 s search deadline, not the 5 s of timeout_ms
    assert len(budgets.seen) == 1 and 0 < budgets.seen[0] <= 0.3, budgets.seen


class Broken:
    """A stage that fails, as an Aisle stage would on a bug or a broken index."""

    def run(self, ctx: SearchContext) -> SearchContext:
        raise RuntimeError("index unreadable")


def test_stage_error_is_answered_by_the_external_service_when_configured(shop: Shop) -> None:
    shop.configure(crs_config(shop.url, when=["error"]))
    pipeline = SearchPipeline((Broken(), *default_stages(external=shop.external)), budget_s=2.0)
    result = shop.search("headlamp", pipeline)  # the page is the external service's answer
    assert result.query_graph.external is not None
    assert result.query_graph.external.reason == "error"
    assert ids(result) == ["ext-11"]
    shop.configure(crs_config(shop.url, when=["no_results"]))
    with pytest.raises(RuntimeError, match="index unreadable"):
        shop.search("tent", pipeline)


def test_vector_guesses_do_not_count_as_results(
    tmp_path_factory: pytest.TempPathFactory,
    shared_data: Path,
    loaded: TypesenseServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hybrid retrieval fills a page with nearest products when no query word matched; the fallback
    still treats the query as unanswered (no_results) and, in replace mode, shows the external answer."""
    from tests.support.vectors import mini_fashion

    from aisle.core.config import Settings
    from aisle.search.engine import SearchEngine

    mini = mini_fashion(tmp_path_factory.getbasetemp() / "vectors-mini", shared_data)
    monkeypatch.setenv(KEY_ENV, loaded.api_key)
    store = open_blob_store(mini.storage_url)
    original = Tenants(store).config("fashion").crs
    set_crs(store, "fashion", crs_config(loaded.url, when=["no_results"], merge="replace"))
    try:
        settings = Settings(storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off")
        engine = SearchEngine.from_settings(settings, store)
        engine.warm_up()  # a cold MiniLM overruns the 250 ms search deadline (the fallback then skips)
        engine.vectors.encode("warm up")  # a query no word matches embeds with MiniLM (hybrid stage)
        config = engine.tenants.config("fashion")
        hybrid = config.global_.hybrid.model_copy(update={"min_similarity": -1.0})  # every guess joins
        guessing = dataclasses.replace(config, global_=config.global_.model_copy(update={"hybrid": hybrid}))
        result = engine.search("fashion", SearchQuery("headlamp"), config=guessing)
        graph = result.query_graph
        assert any(s["stage"].startswith("hybrid") for s in graph.stages_tried)  # the guesses were made
        assert graph.external is not None and graph.external.reason == "no_results"
        assert ids(result) == ["ext-11"]
        # the external service has nothing either: the guesses stay
        nothing = engine.search("fashion", SearchQuery("qzxv wplk"), config=guessing)
        assert nothing.products and not any(i.startswith("ext-") for i in ids(nothing))
        # with the tenant's calibrated similarity floor, no guess is close enough: no results at all
        honest = engine.search("fashion", SearchQuery("qzxv wplk"))
        assert honest.products == [] and honest.total == 0
        assert honest.query_graph.hybrid_floor is not None and honest.query_graph.hybrid_floor.below > 0
        engine.close()
    finally:
        set_crs(store, "fashion", original)


def test_a_rule_with_an_external_action_routes_the_query(shop: Shop) -> None:
    from aisle.search.rules.book import RuleBooks
    from aisle.search.rules.model import RuleBody
    from aisle.search.rules.store import RuleStore

    shop.configure(crs_config(shop.url, when=["rule"], merge="replace"))
    body = RuleBody.model_validate(
        {
            "name": "lamps from the partner",
            "conditions": {"query": {"match": "exact", "value": "headlamp"}},
            "actions": [{"type": "external"}],
        }
    )
    RuleStore(shop.tenants.scope(TENANT)).create(body, "lamps")
    pipeline = SearchPipeline(
        default_stages(rules=RuleBooks(shop.tenants.store), external=shop.external), budget_s=2.0
    )
    result = shop.search("headlamp", pipeline)
    graph = result.query_graph.external
    assert graph is not None and (graph.status, graph.reason) == ("answered", "rule")
    assert ids(result) == ["ext-11"] and result.products[0]["brand"] == "Petzl"
    other = shop.search("tent", pipeline).query_graph.external  # the rule does not fire
    assert other is not None and other.reason == "not_triggered"


def test_calls_in_flight_are_bounded(shop: Shop) -> None:
    """With one slot, a search arriving while another waits on the service skips it (``busy``)."""
    from concurrent.futures import ThreadPoolExecutor

    with silent_server() as port:
        shop.configure(crs_config(f"http://127.0.0.1:{port}", max_concurrency=1, cache_ttl_s=0))
        pipeline = SearchPipeline(default_stages(external=shop.external), budget_s=0.5)
        shop.search("tent", pipeline)  # opens the tenant's backend: both searches below share it
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(shop.search, "socks", pipeline)
            time.sleep(0.1)
            second = pool.submit(shop.search, "socks", pipeline)
            graphs = [f.result().query_graph.external for f in (first, second)]
    assert [(g.status, g.reason) for g in graphs if g is not None] == [
        ("failed", "no_results"),
        ("skipped", "busy"),
    ]
