"""The Typesense backend against a real Typesense server holding the contract catalog."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.search.external.contract import CATALOG, BackendHarness, ExternalSearchContract
from tests.support.sockets import free_port, silent_server

from aisle.core.crs_config import SecretRef, TypesenseBackendConfig
from aisle.demo.typesense_server import TypesenseServer, load_collection
from aisle.search.external.external_search_typesense import TypesenseExternalSearch, filter_by, pages
from aisle.search.model import FilterSpec

KEY_ENV = "AISLE_TEST_TYPESENSE_KEY"


def _config(url: str, key_env: str = KEY_ENV) -> TypesenseBackendConfig:
    return TypesenseBackendConfig(
        type="typesense",
        url=url,
        collection="contract",
        api_key=SecretRef(env=key_env),
        query_by=["title", "brand"],
    )


@pytest.fixture(scope="module")
def contract_url(typesense: TypesenseServer) -> str:
    load_collection(typesense.url, typesense.api_key, "contract", CATALOG)
    return typesense.url


@pytest.fixture
def harness(
    contract_url: str, typesense: TypesenseServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[BackendHarness]:
    monkeypatch.setenv(KEY_ENV, typesense.api_key)
    monkeypatch.setenv("AISLE_TEST_TYPESENSE_WRONG_KEY", "not-the-key")
    backend = TypesenseExternalSearch(_config(contract_url))
    with silent_server() as silent_port:
        yield BackendHarness(
            backend=backend,
            unreachable=lambda: TypesenseExternalSearch(_config(f"http://127.0.0.1:{free_port()}")),
            silent=lambda: TypesenseExternalSearch(_config(f"http://127.0.0.1:{silent_port}")),
            wrong_credentials=lambda: TypesenseExternalSearch(
                _config(contract_url, "AISLE_TEST_TYPESENSE_WRONG_KEY")
            ),
        )
    backend.close()


class TestTypesenseContract(ExternalSearchContract):
    pass


def test_filter_by_expression() -> None:
    specs = [
        FilterSpec(field="brand", value=["Asics", "Nike`s"]),
        FilterSpec(field="price", value={"gte": 20, "lt": 99.5}),
        FilterSpec(field="in_stock", value=True),
    ]
    assert filter_by(specs) == "brand:=[`Asics`,`Nikes`] && price:>=20 && price:<99.5 && in_stock:=[true]"


@pytest.mark.parametrize(
    ("offset", "size", "wanted"),
    [(0, 20, [(1, 20)]), (240, 10, [(1, 250)]), (300, 100, [(4, 100)]), (310, 100, [(4, 100), (5, 100)])],
)
def test_pages_cover_the_window(offset: int, size: int, wanted: list[tuple[int, int]]) -> None:
    assert pages(offset, size) == wanted
    covered = [i for page, per in wanted for i in range((page - 1) * per, page * per)]
    assert set(range(offset, offset + size)) <= set(covered)


def test_page_window_of_an_empty_query(harness: BackendHarness) -> None:
    """An empty query lists every product (Typesense ``q=*``); a page is the window of that list."""
    from aisle.search.external.protocol import ExternalSearchRequest

    everything = harness.backend.search(ExternalSearchRequest(query="", size=12, sort="price_asc"))
    assert len(everything.products) == 12
    window = harness.backend.search(ExternalSearchRequest(query="", offset=3, size=4, sort="price_asc"))
    assert [p.id for p in window.products] == [p.id for p in everything.products][3:7]


def test_missing_collection_is_unavailable(
    typesense: TypesenseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aisle.search.external.errors import ExternalSearchUnavailable
    from aisle.search.external.protocol import ExternalSearchRequest

    monkeypatch.setenv(KEY_ENV, typesense.api_key)
    backend = TypesenseExternalSearch(_config(typesense.url).model_copy(update={"collection": "nothing"}))
    with pytest.raises(ExternalSearchUnavailable, match="404"):
        backend.search(ExternalSearchRequest(query="x"))
    backend.close()


def test_unknown_filter_field_is_rejected(harness: BackendHarness) -> None:
    from aisle.search.external.errors import ExternalSearchRejected
    from aisle.search.external.protocol import ExternalSearchRequest

    spec = FilterSpec(field="colour", value="Blue")
    with pytest.raises(ExternalSearchRejected):
        harness.backend.search(ExternalSearchRequest(query="jacket", filters=(spec,)))


def test_a_server_refuses_a_port_in_use(typesense: TypesenseServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Another server on the port would answer the health checks: starting there is refused."""
    with pytest.raises(RuntimeError, match="already in use"):
        TypesenseServer(tmp_path, api_key="k", port=typesense.port).start()
