"""A tenant with SIMULATED traffic gets a behaviour-trained ranker through the job API and serves it (#30).

1. Traffic: ``N`` simulated Home Depot searches with their clicks and purchases
   (:func:`bench.click_traffic.simulate`, the same shoppers and loop as ``bench_click_learning``: in
   process, the search engine and the services' recording code writing the analytics Parquet log of the
   bucket), the second half through an exploration experiment (control: no ranker; ``explore``: a click
   ranker trained on the first half by the platform's trainer, saved below the threshold, not deployed).
2. The real services as subprocesses (``aisle serve --only edit`` and ``--only search``, over the same
   bucket and data dir; the search service records nothing, so the scoring searches do not join the
   shoppers' log). Auth is on unless ``--no-auth``: ``aisle serve --only auth`` too, a client of the
   tenant registered with ``aisle auth add-client``, every request with the token ``aisle auth token``
   got for it.
3. Home Depot dev NDCG@10 over HTTP (``POST /search``, every dev query with a relevant judgment).
4. ``POST /rankers/train?source=behaviour`` on the edit service (its default ``deploy=experiment``),
   ``GET /jobs/{jobId}`` polled (progress printed) until it ends; past ``MIN_SEARCHES``/``MIN_CLICKS``
   its result must name a ranker trial it started (the new version against the live setting, 50/50 by
   visitor), nothing deployed.
5. The trial's traffic: ``TRIAL_SEARCHES`` more simulated searches by new visitors, in process through
   the platform's experiment assignment, recorded like the rest (:func:`bench.click_traffic.simulate_trial`).
6. The job again: it judges the trial (promoted on a significant click-through win, stopped otherwise)
   and, on a promotion, ``POST /search`` until ``queryGraph.stages_tried`` names ``rerank-v<version>``;
   then NDCG@10 over HTTP again (searches without a visitor id get the live setting).

    python -m bench.bench_behaviour_served --data-dir ../shared/data [--searches 1000000] [--no-auth]

``AISLE_BENCH_SERVED_DIR`` (default ``var/bench-served``) holds the bucket and data dir; the catalog is
kept between runs, the tenant's log, rankers, experiments and behaviour tables are removed first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.click_traffic import TENANT, Shoppers, simulate, simulate_trial
from bench.search_server import ServiceProcess

SEARCHES = 1_000_000
TRIAL_SEARCHES = 200_000
JOB_TIMEOUT_S = 3600.0
SERVE_TIMEOUT_S = 60.0


def platform_explorer(world: Shoppers):  # type: ignore[no-untyped-def]
    """The mid-run trainer: the platform's own (:func:`aisle.search.training.clicks.train_click_ranker`
    on the behaviour version just refreshed, text features), saved as the next version, not put in use."""

    def explore(record: Any) -> int | None:
        from aisle.behaviour.rankers import click_log
        from aisle.core.errors import BadRequest
        from aisle.search.training.clicks import train_click_ranker

        try:
            saved, deployed = train_click_ranker(
                world.tenants,
                TENANT,
                world.work / "data",
                click_log(world.tenants.store, TENANT, record.version),
                use=False,
            )
        except BadRequest as exc:  # too few clicked queries yet: nothing to explore
            print(f"mid-run trainer: {exc.message}")
            return None
        assert not deployed
        return saved.version

    return explore


def _clean(work: Path) -> None:
    """The tenant's log, rankers, experiments and behaviour tables removed; the catalog kept."""
    scope = work / "bucket" / TENANT
    for sub in ("analytics", "search/rankers", "experiments"):
        shutil.rmtree(scope / sub, ignore_errors=True)
    for sub in ("cache", "data/analytics"):
        shutil.rmtree(work / sub, ignore_errors=True)


def ndcg_over_http(client: httpx.Client, url: str, qrels: dict[str, dict[str, float]]) -> tuple[float, str]:
    """Mean NDCG@10 of the search service's answers over ``qrels``' queries; and the rerank stages the
    answers named (e.g. ``rerank-v2``, or ``none``)."""
    from aisle.search.evaluation import ndcg_at_k

    scores = []
    stages: set[str] = set()
    for query, judged in qrels.items():
        resp = client.post(url + "/search", json={"query": query, "tenant": TENANT, "size": 10})
        resp.raise_for_status()
        body = resp.json()
        scores.append(ndcg_at_k([str(p["id"]) for p in body["products"]], judged))
        stages |= {s["stage"] for s in body["queryGraph"]["stages_tried"] if s["stage"].startswith("rerank")}
    return sum(scores) / len(scores), ",".join(sorted(stages)) or "none"


def train_over_http(client: httpx.Client, url: str) -> dict[str, Any]:
    """The job through the edit service, polled until it ends; returns its final JSON."""
    resp = client.post(url + "/rankers/train", params={"tenant": TENANT, "source": "behaviour"})
    assert resp.status_code == 202, resp.text
    job_id = resp.json()["jobId"]
    print(f"POST /rankers/train?source=behaviour -> 202, job {job_id}")
    deadline = time.monotonic() + JOB_TIMEOUT_S
    last = None
    start = time.perf_counter()
    while time.monotonic() < deadline:
        job = client.get(f"{url}/jobs/{job_id}", params={"tenant": TENANT}).json()
        seen = (job["status"], job["percent"], job["message"])
        if seen != last:
            took = time.perf_counter() - start
            print(f"  {took:6.0f} s  {job['status']:<11} {job['percent']:3d}%  {job['message']}")
            last = seen
        if job["status"] in ("completed", "failed"):
            return job  # type: ignore[no-any-return]
        time.sleep(2.0)
    raise TimeoutError(f"job {job_id} did not finish in {JOB_TIMEOUT_S:.0f} s")


def wait_served(client: httpx.Client, url: str, version: int) -> float:
    """Seconds until a search answer names ``rerank-v<version>``."""
    start = time.perf_counter()
    while time.perf_counter() - start < SERVE_TIMEOUT_S:
        body = client.post(url + "/search", json={"query": "cordless drill", "tenant": TENANT}).json()
        if any(s["stage"] == f"rerank-v{version}" for s in body["queryGraph"]["stages_tried"]):
            return time.perf_counter() - start
        time.sleep(0.5)
    raise TimeoutError(f"search did not serve ranker v{version} within {SERVE_TIMEOUT_S:.0f} s")


def _cli(env: dict[str, str], *args: str) -> str:
    """``aisle ARGS`` in a subprocess with ``env``; its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "aisle.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def serve_and_train(
    work: Path, qrels: dict[str, dict[str, float]], trial: Callable[[], dict[str, Any]], *, auth: bool
) -> dict[str, Any]:
    """Steps 2-6 of the module docstring over ``work``'s bucket and data dir; ``trial`` serves the
    trial's traffic (step 5). With ``auth`` the token
    service runs too, a client of the tenant (search:read, recs:read, recs:write) is registered with
    ``aisle auth add-client`` and every request carries the token ``aisle auth token`` got for it."""
    env = {
        "AISLE_STORAGE_URL": f"file://{work / 'bucket'}",
        "AISLE_DATA_DIR": str(work / "data"),
        "AISLE_AUTH": "on" if auth else "off",
    }
    started: list[ServiceProcess] = []
    headers = {}
    try:
        if auth:
            key = work / "bench-client.pem"
            key.unlink(missing_ok=True)
            scopes = "search:read,recs:read,recs:write"
            _cli(env, "auth", "add-client", "--tenants", TENANT, "--scopes", scopes,
                 "--client-id", "bench-served", "--key-out", str(key), "--replace")  # fmt: skip
            token_service = ServiceProcess.as_served("auth", env, workers=1)
            started.append(token_service)
            token_service.wait_ready()
            env["AISLE_AUTH_URL"] = token_service.url
            token = _cli(env, "auth", "token", "--client-id", "bench-served", "--key-file", str(key))
            headers["Authorization"] = f"Bearer {token}"  # 15 minutes: longer than what follows
        edit = ServiceProcess.as_served("edit", env, workers=1)
        started.append(edit)
        search = ServiceProcess.as_served("search", env | {"AISLE_ANALYTICS": "false"}, workers=1)
        started.append(search)
        edit.wait_ready()
        search.wait_ready()
        out: dict[str, Any] = {}
        with httpx.Client(timeout=60.0, headers=headers) as client:
            out["before"], out["stage0"] = ndcg_over_http(client, search.url, qrels)
            print(
                f"before the job: NDCG@10 {out['before']:.4f}, {len(qrels)} dev queries "
                f"(rerank: {out['stage0']}; auth {env['AISLE_AUTH']})"
            )
            t = time.perf_counter()
            job = train_over_http(client, edit.url)
            out["job_s"] = time.perf_counter() - t
            result = out["result"] = job.get("result") or {}
            assert job["status"] == "completed", job
            version = out["version"] = int(result["rankerVersion"])
            print(f"job result: {result}")
            out["verdict"] = None
            if result["trial"] is not None:
                out["trial_traffic"] = trial()
                print(f"trial traffic: {out['trial_traffic']}")
                again = train_over_http(client, edit.url)
                assert again["status"] == "completed", again
                out["result2"] = again["result"]
                print(f"second job result: {again['result']}")
                out["verdict"] = next(
                    v for v in again["result"]["judgedTrials"] if v["rankerVersion"] == version
                )
            promoted = result["deployed"] or (out["verdict"] or {}).get("outcome") == "promoted"
            out["served_s"] = wait_served(client, search.url, version) if promoted else float("nan")
            out["after"], out["stage1"] = ndcg_over_http(client, search.url, qrels)
        return out
    finally:
        for service in reversed(started):
            service.stop()


def main(data_dir: Path, searches: int | None = None, auth: bool = True) -> None:
    searches = searches or int(os.environ.get("AISLE_BENCH_SERVED_SEARCHES", SEARCHES))
    work = Path(
        os.environ.get("AISLE_BENCH_SERVED_DIR", Path(__file__).resolve().parents[1] / "var" / "bench-served")
    ).resolve()
    work.mkdir(parents=True, exist_ok=True)
    _clean(work)
    world = Shoppers(data_dir, work)
    start = time.perf_counter()
    figures = simulate(world, work, searches, platform_explorer(world))
    sim_s = time.perf_counter() - start
    print(f"SIMULATED traffic: {searches} searches, {figures['clicks']} clicks in {sim_s:.0f} s (in process)")
    print(f"  answers per variant: {figures['variants']}")
    qrels = {q: j for q, j in world.dev.items() if any(r > 1 for r in j.values())}
    trial_searches = int(os.environ.get("AISLE_BENCH_SERVED_TRIAL_SEARCHES", TRIAL_SEARCHES))
    served = serve_and_train(work, qrels, lambda: simulate_trial(world, work, trial_searches), auth=auth)
    before, before_stage, after, after_stage = (served[k] for k in ("before", "stage0", "after", "stage1"))
    result, job_s, served_s, version = (served[k] for k in ("result", "job_s", "served_s", "version"))
    verdict = served["verdict"]
    from aisle.search.training.clicks import MIN_CLICKS, MIN_SEARCHES

    if searches >= MIN_SEARCHES and figures["clicks"] >= MIN_CLICKS:  # type: ignore[operator]
        assert result["trial"] is not None and not result["deployed"], result
    print(
        f"\nSIMULATED shoppers; Home Depot dev NDCG@10 over HTTP ({len(qrels)} queries); "
        f"`python -m bench.bench_behaviour_served --searches {searches}{'' if auth else ' --no-auth'}`"
    )
    print(f"{'':<44} {'ranker served':<14} {'NDCG@10':<18}")
    print(f"{'before the job (exploration stopped)':<44} {before_stage:<14} {before:.4f}")
    gain = after - before
    outcome = (verdict or {}).get("outcome", "no trial")
    label = f"after the trial and the second job ({outcome})"
    print(f"{label:<44} {after_stage:<14} {after:.4f} ({gain:+.4f})")
    if verdict is not None:
        print(
            f"trial of v{version}: {served['trial_traffic']['searches']} searches, visitors per arm "
            f"{verdict['visitors']} (needed {verdict['neededVisitors']}), click-through lift "
            f"{verdict['lift']:+.2%}, p {verdict['pValue']:.2g}: {outcome}; the second job put "
            f"v{(served['result2']['trial'] or {}).get('rankerVersion', '-')} on trial"
        )
    print(
        f"traffic {searches} searches / {figures['clicks']} clicks written in {sim_s:.0f} s; exploration: "
        f"{figures['v1']}; first job: {job_s:.0f} s, ranker v{version}, deployed {result['deployed']}, "
        f"behaviour v{result['behaviourVersion']} ({result['searches']} searches, "
        f"{result['clicks']} clicks), "
        f"propensities {[round(x, 2) for x in result['propensities'] or []]}; served {served_s:.1f} s after"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--searches", type=int, default=SEARCHES)
    parser.add_argument("--no-auth", action="store_true", help="services with AISLE_AUTH=off")
    args = parser.parse_args()
    main(args.data_dir.resolve(), args.searches, auth=not args.no_auth)
