"""Lag from an acknowledged catalog write to a search that finds it: single changes and a sustained stream.

Single changes: a product's title gains a fresh random word (``PATCH``), then the engine is searched for
that word until the product is among the first 10 hits; lag = the answer that found it - the write's
acknowledgement (both client clocks, ``time.perf_counter``). Changes start every ``interval_s``, each
polled by its own thread (back-off from 2 ms to 100 ms between searches, so a lag of seconds is read to
within 100 ms), and a change not found within ``timeout_s`` is counted, never waited for longer.

Sustained stream: ``clients`` threads send merge patches of ``price`` and ``discounted_price`` in batches
of ``batch`` operations, each thread on its own share of the products (so every product's last
acknowledged value is the last one its one thread sent), paced open-loop to ``rate`` operations a second
in total (a late thread sends at once and the achieved rate is reported). Every price written is unique
and above every price of the catalog (``price_base``, a multiple of 100,000 above them, + the operation's
number: whole, so exact in Typesense's 32-bit floats too), so a search filtered to a price finds exactly
the product that write made it. One operation in ``sample_every`` goes to a product
kept aside for sampling (written once in the run); a probe thread searches, round after round, for
every sampled price acknowledged and not yet seen (100 prices a search), so its lag is read to within
one round (about 10-50 ms; printed).
"""

from __future__ import annotations

import itertools
import random
import string
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.catalog_endpoints import Endpoint, WriteRefused


def fresh_word(rng: random.Random) -> str:
    """A word no catalog holds: ``zq`` and eight random letters."""
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


@dataclass
class LagRun:
    """Lags (ms) of the writes found, writes not found within the timeout, writes not acknowledged, the
    acknowledged final values by product id, the operations acknowledged and over how long (s)."""

    lags_ms: list[float] = field(default_factory=list)
    not_found: int = 0
    refused: int = 0
    finals: dict[str, dict[str, Any]] = field(default_factory=dict)
    uncertain: set[str] = field(default_factory=set)
    acked: int = 0
    seconds: float = 0.0
    rounds: list[float] = field(default_factory=list)  # the probe's round times, ms
    why_refused: str = ""  # the first refusal's reason

    @property
    def probed(self) -> int:
        """Writes searched for: found or given up on."""
        return len(self.lags_ms) + self.not_found

    @property
    def rate(self) -> float:
        return self.acked / self.seconds if self.seconds else 0.0


def found_by_word(endpoint: Endpoint, tenant: str, word: str, product_id: str) -> bool:
    """Whether a search for ``word`` has ``product_id`` in its first 10 hits (a failed search: not yet)."""
    try:
        hits = endpoint.hits(endpoint.ask(endpoint.search_request(tenant, word)))
    except (httpx.HTTPError, ValueError, KeyError):
        return False
    return any(str(h.get("id")) == product_id for h in hits)


def _one_change(
    endpoint: Endpoint, tenant: str, product_id: str, title: str, timeout_s: float
) -> tuple[float | None, bool]:
    """Patch the title, then search for its last word; (lag ms or None, acknowledged)."""
    word = title.rsplit(" ", 1)[1]
    try:
        endpoint.patch(tenant, product_id, {"title": title})
    except (WriteRefused, httpx.HTTPError):
        return None, False
    acked = time.perf_counter()
    wait = 0.002
    while True:
        found = found_by_word(endpoint, tenant, word, product_id)
        now = time.perf_counter()
        if found:
            return (now - acked) * 1000, True
        if now - acked > timeout_s:
            return None, True
        time.sleep(wait)
        wait = min(wait * 1.5, 0.1)


def single_changes(
    endpoint: Endpoint,
    tenant: str,
    titles: list[tuple[str, str]],
    *,
    interval_s: float,
    timeout_s: float,
    seed: int,
) -> LagRun:
    """One title change per ``(id, title)``, started ``interval_s`` apart (see the module docstring)."""
    rng = random.Random(seed)
    run = LagRun()
    changes = [(pid, f"{title} {fresh_word(rng)}") for pid, title in titles]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(changes) or 1) as pool:
        futures = []
        for i, (pid, title) in enumerate(changes):
            time.sleep(max(0.0, start + i * interval_s - time.perf_counter()))
            futures.append(pool.submit(_one_change, endpoint, tenant, pid, title, timeout_s))
        for (pid, title), future in zip(changes, futures, strict=True):
            lag, acked = future.result()
            if not acked:
                run.refused += 1
                run.uncertain.add(pid)
                continue
            run.acked += 1
            run.finals[pid] = {"title": title}
            if lag is None:
                run.not_found += 1
            else:
                run.lags_ms.append(lag)
    run.seconds = time.perf_counter() - start
    return run


class _Stream:
    """The shared state of one sustained run: operation numbers, samples, and the probe's queue."""

    def __init__(self, reserved: list[str], sample_every: int, price_base: float) -> None:
        self.numbers = itertools.count(1)
        self.price_base = price_base
        self.reserved = iter(reserved)
        self.sample_every = sample_every
        self.lock = threading.Lock()
        self.pending: dict[float, tuple[str, float]] = {}  # sampled price -> (product id, ack time)
        self.run = LagRun()
        self.last_ack = 0.0

    def operation(self, rng: random.Random, share: list[str], pos: int) -> tuple[str, dict[str, Any], bool]:
        """The next operation: (product id, its patch, sampled)."""
        n = next(self.numbers)
        fields = {"price": self.price_base + n, "discounted_price": float(rng.randrange(100, 5000))}
        if n % self.sample_every == 0:
            with self.lock:
                sampled = next(self.reserved, None)
            if sampled is not None:
                return sampled, fields, True
        return share[pos % len(share)], fields, False


def _client(
    endpoint: Endpoint,
    tenant: str,
    stream: _Stream,
    share: list[str],
    start: float,
    end: float,
    interval: float,
    batch: int,
    seed: int,
) -> None:
    rng = random.Random(seed)
    rng.shuffle(share)
    pos, next_t = 0, start
    while next_t < end:
        time.sleep(max(0.0, next_t - time.perf_counter()))
        next_t += interval
        ops, sampled = [], []
        for _ in range(batch):
            pid, fields, is_sample = stream.operation(rng, share, pos)
            pos += not is_sample
            ops.append((pid, fields))
            if is_sample:
                sampled.append((pid, fields["price"]))
        try:
            refused = endpoint.update_batch(tenant, ops)
        except (WriteRefused, httpx.HTTPError, ValueError) as exc:
            refused = {pid: str(exc)[:200] for pid, _ in ops}
        if refused and not stream.run.why_refused:
            stream.run.why_refused = next(iter(refused.values()))
        acked = time.perf_counter()
        run = stream.run
        with stream.lock:
            stream.last_ack = max(stream.last_ack, acked)
            for pid, fields in ops:
                if pid in refused:
                    run.refused += 1
                    run.uncertain.add(pid)
                else:
                    run.acked += 1
                    run.finals[pid] = fields
                    run.uncertain.discard(pid)
            for pid, price in sampled:
                if pid not in refused:
                    stream.pending[price] = (pid, acked)


def _probe(endpoint: Endpoint, tenant: str, stream: _Stream, stop: threading.Event, timeout_s: float) -> None:
    """Search for the sampled prices acknowledged and not yet seen, round after round, until the stream
    has stopped and each was seen or timed out."""
    run = stream.run
    while True:
        with stream.lock:
            waiting = sorted(stream.pending.items(), key=lambda kv: kv[1][1])
        if not waiting:
            if stop.is_set():
                return
            time.sleep(0.005)
            continue
        begun = time.perf_counter()
        for i in range(0, len(waiting), 100):
            chunk = waiting[i : i + 100]
            try:
                hits = endpoint.hits(endpoint.ask(endpoint.prices_request(tenant, [p for p, _ in chunk])))
            except (httpx.HTTPError, ValueError, KeyError):
                continue  # a failed probe is a probe late, not a write lost
            now = time.perf_counter()
            seen = {(str(h.get("id")), float(h.get("price") or 0)) for h in hits}
            with stream.lock:
                for price, (pid, acked) in chunk:
                    if (pid, price) in seen:
                        run.lags_ms.append((now - acked) * 1000)
                        del stream.pending[price]
                    elif now - acked > timeout_s:
                        run.not_found += 1
                        del stream.pending[price]
        run.rounds.append((time.perf_counter() - begun) * 1000)
        time.sleep(0.01)


def sustained(
    endpoint: Endpoint,
    tenant: str,
    ids: list[str],
    *,
    seconds: float,
    rate: float,
    batch: int,
    clients: int,
    sample_every: int,
    timeout_s: float,
    seed: int,
    price_base: float,
) -> LagRun:
    """The sustained stream (module docstring); returns its lags and every acknowledged final value."""
    reserve = int(seconds * rate / sample_every) + 10
    stream = _Stream(ids[:reserve], sample_every, price_base)
    pool = ids[reserve:]
    interval = batch * clients / rate
    stop = threading.Event()
    probe = threading.Thread(target=_probe, args=(endpoint, tenant, stream, stop, timeout_s), daemon=True)
    probe.start()
    start = time.perf_counter()
    threads = [
        threading.Thread(
            target=_client,
            args=(
                endpoint,
                tenant,
                stream,
                pool[k::clients],
                start + k * interval / clients,
                start + seconds,
                interval,
                batch,
                seed + k,
            ),
            daemon=True,
        )
        for k in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stream.run.seconds = stream.last_ack - start
    stop.set()
    probe.join()
    return stream.run
