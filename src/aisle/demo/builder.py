"""The demo's heavy artifacts, built in the background while the services already answer.

``make run`` builds the cheap part of the demo first (catalogs, indexes, query log, rules,
suggestions, the cheap recommendation models and their containers: ``aisle demo --cheap``), starts the
services, and ``aisle serve --build-demo`` starts one builder process (``aisle demo --heavy``) for the
rest, in this order (the first answers the most visible features soonest):

==========  ===============  ==============================================================
tenant      artifact         switches on
==========  ===============  ==============================================================
homedepot   traffic          the Analytics pages: a simulated month of searches (a minute)
yoochoose   traffic          the Analytics pages: replayed sessions on ``also-viewed``
fashion     text_vectors     hybrid search, ``/vector-search``
fashion     similar_items    the ``similar-items`` container (SIMILAR_ITEMS reuses the vectors)
fashion     image_vectors    ``/images/search``
homedepot   text_vectors     hybrid search, ``/vector-search``
homedepot   ranker           the learned ranker (its features include the hybrid cosine)
homedepot   experiment       the Experiments page: the ranker against none, simulated visitors
==========  ===============  ==============================================================

Each build reports to the build board (:mod:`aisle.core.builds`), which ``aisle status``,
``GET /health`` and the services' ``vectors_building`` answers read. The services pick each artifact up
by themselves (vector tables and rankers are re-checked every few seconds, the container is created
once its model is deployed). One builder runs at a time (an exclusive ``flock`` on
``<data_dir>/builds/.builder.lock``); a second one exits at once. A builder stopped half-way (Ctrl-C,
a restart of ``make run``) leaves no half-written artifact (tables, models and rankers are published
complete); the next builder starts the interrupted build again and skips the finished ones.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from aisle.core.builds import BuildReporter
from aisle.core.builds_resolver import open_build_board
from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants

Echo = Callable[[str], None]
HEAVY: list[tuple[str, str]] = [
    ("homedepot", "traffic"),
    ("yoochoose", "traffic"),
    ("fashion", "text_vectors"),
    ("fashion", "similar_items"),
    ("fashion", "image_vectors"),
    ("homedepot", "text_vectors"),
    ("homedepot", "ranker"),
    ("homedepot", "experiment"),  # after the ranker: the experiment compares it with none
]
_COUNT = re.compile(r"(\d+)/(\d+)")


@contextmanager
def builder_lock(data_dir: Path) -> Iterator[bool]:
    """Hold the builder lock while inside; yields False (holding nothing) when another builder has it."""
    path = Path(data_dir) / "builds" / ".builder.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_heavy(settings: Settings, data: Path | None, *, images: bool = True, echo: Echo = print) -> int:
    """Build every heavy artifact of the table above that is missing; returns how many failed.

    Tenants or data that do not exist mark their builds ``failed`` with the reason (nothing raises);
    a failed build is retried by the next builder. Returns -1 when another builder holds the lock.
    """
    board = open_build_board(settings)
    with builder_lock(settings.data_dir) as mine:
        if not mine:
            echo("another builder is already running; see `aisle status`")
            return -1
        wanted = [(t, a) for t, a in HEAVY if images or a != "image_vectors"]
        reporters = {key: BuildReporter(board, *key) for key in wanted}
        for reporter in reporters.values():
            reporter.queue()
        store = open_blob_store_from_settings(settings)
        tenants = Tenants(store, ttl=0)
        failed = 0
        for (tenant, artifact), reporter in reporters.items():
            reporter.start()
            echo(f"{tenant}: building {artifact} in the background")
            try:
                if not tenants.exists(tenant):
                    raise AisleError(f"tenant '{tenant}' does not exist")
                message = _STEPS[artifact](settings, tenants, tenant, data, reporter)
            except Exception as exc:  # one failed build must not stop the others
                reason = exc.message if isinstance(exc, AisleError) else f"{type(exc).__name__}: {exc}"
                reporter.fail(reason)
                echo(f"{tenant}: {artifact} failed: {reason}")
                failed += 1
            else:
                reporter.finish(message)
                echo(f"{tenant}: {artifact} {message}")
        return failed


def _text(settings: Settings, tenants: Tenants, tenant: str, data: Path | None, r: BuildReporter) -> str:
    from aisle.vectors.build import build_text_vectors

    build_text_vectors(tenants, tenant, settings.data_dir, progress=r.progress)
    return "ready"


def _images(settings: Settings, tenants: Tenants, tenant: str, data: Path | None, r: BuildReporter) -> str:
    from aisle.demo.vectors import IMAGE_TENANTS
    from aisle.vectors.image_build import build_image_vectors

    folder = data / IMAGE_TENANTS[tenant] if data is not None else None
    if folder is None or not folder.is_dir():
        raise AisleError(f"no photos at {folder}")
    build_image_vectors(tenants, tenant, settings.data_dir, folder, progress=r.progress)
    return "ready"


def _similar(settings: Settings, tenants: Tenants, tenant: str, data: Path | None, r: BuildReporter) -> str:
    from aisle.demo.containers import deploy_demo
    from aisle.demo.recs import train_demo_models

    def line(text: str) -> None:
        r.progress(text, 0, 1)

    records = train_demo_models(tenants.store, data, vectors_dir=settings.data_dir, progress=line)
    deployed = deploy_demo(tenants.store, settings, records, progress=line)
    return f"ready: {len(deployed)} demo containers"


def _ranker(settings: Settings, tenants: Tenants, tenant: str, data: Path | None, r: BuildReporter) -> str:
    from aisle.demo.ranker import train_demo_rankers

    last: list[str] = []

    def line(text: str) -> None:
        last[:] = [text]
        count = _COUNT.search(text)
        done, total = (int(count[1]), int(count[2])) if count else (0, 1)
        r.progress(text.removeprefix(f"{tenant}: "), done, total)

    train_demo_rankers(tenants, settings.data_dir, data, echo=line)
    if last and "skipped" in last[0]:
        raise AisleError(last[0])
    return "in use"


def _traffic(settings: Settings, tenants: Tenants, tenant: str, data: Path | None, r: BuildReporter) -> str:
    from aisle.demo.traffic_build import build_demo_traffic

    if data is None:
        raise AisleError("no shared data: the simulated traffic needs its queries and sessions")
    return build_demo_traffic(settings, tenants, tenant, data, r.progress)


def _experiment(
    settings: Settings, tenants: Tenants, tenant: str, data: Path | None, r: BuildReporter
) -> str:
    from aisle.demo.experiment import build_demo_experiment

    if data is None:
        raise AisleError("no shared data: the simulated visitors need the queries and judgments")
    return build_demo_experiment(settings, tenants, data, r.progress)


_STEPS = {
    "traffic": _traffic,
    "text_vectors": _text,
    "image_vectors": _images,
    "similar_items": _similar,
    "ranker": _ranker,
    "experiment": _experiment,
}


def run_in_background() -> None:
    """Set this process up as the builder: lower CPU priority (so the services keep answering
    quickly), and SIGTERM (``aisle serve`` stopping) unwinds like Ctrl-C, so a half-built artifact's
    temporary directory is removed on the way out."""
    os.nice(10)

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
