"""Two search replicas behind HAProxy (Debian's package): one is killed or stopped under load and
restarted; the shopper sees no failed request once HAProxy's health check has noticed, and the
restarted replica serves again (docs/deploy.md, issue 21).

The setup and the phases are in :mod:`tests.support.failover`; ``bench/bench_failover.py`` prints the
same run's figures. Correctness only: no timing is asserted beyond the waits' own time limits.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import require
from tests.support.failover import FailoverReport, SearchCluster, run_failover, search_cluster
from tests.support.haproxy import HAPROXY

pytestmark = pytest.mark.slow  # starts replicas behind HAProxy as processes

CLIENTS = 4
AFTER_NOTICE = ("down", "restarting", "up")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchCluster]:
    require(HAPROXY is not None, "haproxy is not installed (apt-get install haproxy)")
    with search_cluster(Path(tmp_path_factory.mktemp("failover")), products=200) as made:
        yield made


def failures(report: FailoverReport, phases: tuple[str, ...]) -> list[str]:
    return [f"{phase}: {a.outcome} {a.detail[:120]}" for phase, a in report.failures if phase in phases]


def assert_served_again(report: FailoverReport, victim: str) -> None:
    assert report.total("down") > 0, "no request was sent while the replica was down"
    assert set(report.served_by["down"]) <= {"s2"}, report.served_by["down"]
    assert report.served_by["up"][victim] > 0, f"the restarted replica served nothing: {report.served_by}"
    row = report.stats[victim]
    assert row["status"] == "UP" and int(row["chkdown"]) >= 1, row


def test_a_killed_replica_fails_no_request_once_haproxy_has_noticed(cluster: SearchCluster) -> None:
    report = run_failover(cluster, "kill", clients=CLIENTS, warm_s=1.5, down_s=2.5, after_s=2.0)
    assert failures(report, ("before", *AFTER_NOTICE)) == []
    # before the check notices, at most the requests in flight on the killed replica may fail (the
    # retries on the other replica usually save them too)
    assert report.failed("unnoticed") <= CLIENTS, failures(report, ("unnoticed",))
    assert_served_again(report, "s1")


def test_a_gracefully_stopped_replica_fails_no_request(cluster: SearchCluster) -> None:
    report = run_failover(cluster, "term", clients=CLIENTS, warm_s=1.5, down_s=2.5, after_s=2.0)
    assert failures(report, ("before", "unnoticed", *AFTER_NOTICE)) == []
    assert_served_again(report, "s1")
