"""CUSTOMERS_ALSO_VIEW: session-based k-nearest-neighbours over viewing sessions.

A re-implementation from the papers' descriptions of the V-SKNN / STAN family
(Ludewig & Jannach, "Evaluation of session-based recommendation algorithms", 2018; Garg et al.,
"Sequence and Time Aware Neighborhood for Session-based Recommendations: STAN", SIGIR 2019;
Ludewig, Mauro, Latifi & Jannach, "Empirical analysis of session-based recommendation algorithms", 2021).

For the visitor's current session ``s = (i_1 .. i_L)`` (oldest first):

1. candidate neighbours: for each distinct item of ``s``, its ``sample`` most recent training sessions;
2. similarity ``sim(s, n) = sum_{i in s ∩ n} exp((pos_s(i) - L) / lambda_pos)`` (STAN factor 1, recent
   clicks count more), times ``exp(-(t - t_n) / lambda_time)`` (STAN factor 2, recent sessions count
   more), keeping the ``k`` most similar sessions;
3. item score ``sum_n sim(s, n) * exp(-gap / lambda) * idf(c)^idf_power`` where ``gap`` is the distance
   in ``n`` between ``c`` and ``anchor``, the most recent item of ``s`` found in ``n`` (STAN factor 3:
   items close to the shared item; ``lambda_inh`` after it, ``lambda_before`` before it), and
   ``idf(c) = log(N / n_c)`` damps very popular items (V-SKNN's IDF weighting);
4. the session's own items are lifted by ``remind * max score * their factor-1 weight`` (re-views are
   about a quarter of YooChoose next events; the "reminder" idea of Latifi, Mauro & Jannach 2021).

No session and a single seed give the same scores as the session ``(seed,)``; item neighbours for every
item are precomputed at training time so that case costs one lookup.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from aisle.recs.models.base import ModelType, RecContext, Scored


@dataclass(frozen=True)
class SessionKnnParams:
    """Hyper-parameters (times in seconds).

    Defaults chosen on a validation split of YooChoose training data (its last day held out), never on
    the test file. ``lambda_before`` decays neighbour items clicked before the anchor; ``remind`` lifts
    the session's own items (share of the best score), as re-views are frequent next events.
    """

    k: int = 100
    sample: int = 1000
    lambda_pos: float = 1.0
    lambda_time: float = 10.0 * 86400
    lambda_inh: float = 2.0
    lambda_before: float = 2.0
    idf_power: float = 0.5
    remind: float = 1.0
    neighbours: int = 50


@dataclass
class SessionKnnModel:
    """Trained arrays. ``items[j]`` is the product id of item index ``j``.

    Shapes: sessions CSR ``sess_ptr (S+1,)``, ``sess_items (E,)`` item indices in click order,
    ``sess_time (S,)`` last click (unix s); item→sessions CSR ``item_ptr (I+1,)``, ``item_sess (E',)``
    most recent session first; ``idf (I,)``; precomputed ``nb_items (I, neighbours)`` / ``nb_scores``.
    """

    items: np.ndarray
    sess_ptr: np.ndarray
    sess_items: np.ndarray
    sess_time: np.ndarray
    item_ptr: np.ndarray
    item_sess: np.ndarray
    idf: np.ndarray
    nb_items: np.ndarray
    nb_scores: np.ndarray
    params: SessionKnnParams
    model_type: ModelType = ModelType.CUSTOMERS_ALSO_VIEW

    def __post_init__(self) -> None:
        self.index = {str(x): j for j, x in enumerate(self.items.tolist())}
        self._sess_len = np.diff(self.sess_ptr)
        self._sess_of_event = np.repeat(np.arange(len(self.sess_time)), self._sess_len)
        self._pos_of_event = np.arange(len(self.sess_items)) - np.repeat(self.sess_ptr[:-1], self._sess_len)
        self._idf_w = np.power(np.maximum(self.idf, 1e-6), self.params.idf_power)

    # -- scoring ---------------------------------------------------------------------------------

    def scores(self, session: np.ndarray, now: float | None = None) -> np.ndarray:
        """Scores ``(I,)`` float64 of every item for a session of item indices ``(L,)``, oldest first.

        ``now`` (unix s) is the time of the prediction; default: the latest training session.
        Items of the session itself are scored like any other item (a re-view is a valid next view).
        """
        p = self.params
        n_items = len(self.items)
        if len(session) == 0:
            return np.zeros(n_items)
        now = float(self.sess_time.max()) if now is None else now
        L = len(session)
        # latest position of each distinct item of the session, and its weight (STAN factor 1)
        uniq, first_rev = np.unique(session[::-1], return_index=True)
        last_pos = L - 1 - first_rev
        w_item = np.exp((last_pos - (L - 1)) / p.lambda_pos)
        starts, ends = (
            self.item_ptr[uniq],
            np.minimum(self.item_ptr[uniq + 1], self.item_ptr[uniq] + p.sample),
        )
        lens = ends - starts
        if lens.sum() == 0:
            return np.zeros(n_items)
        gather = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(lens.sum())
        cand = self.item_sess[gather]
        sim_all = np.bincount(cand, weights=np.repeat(w_item, lens), minlength=len(self.sess_time))
        neigh = np.flatnonzero(sim_all)
        sim = sim_all[neigh] * np.exp(-np.maximum(now - self.sess_time[neigh], 0.0) / p.lambda_time)
        if len(neigh) > p.k:
            top = np.argpartition(-sim, p.k)[: p.k]
            neigh, sim = neigh[top], sim[top]
        # gather the neighbours' events
        nl = self._sess_len[neigh]
        ev = np.repeat(self.sess_ptr[neigh] - np.cumsum(np.r_[0, nl[:-1]]), nl) + np.arange(nl.sum())
        ev_items = self.sess_items[ev]
        seg = np.repeat(np.arange(len(neigh)), nl)
        pos = self._pos_of_event[ev]
        # anchor: position in the neighbour of the most recent shared item (STAN factor 3)
        pos_in_s = np.full(n_items, -1, dtype=np.int64)
        pos_in_s[uniq] = last_pos
        ps = pos_in_s[ev_items]
        order = np.lexsort((ps, seg))  # per segment, the largest ps last
        seg_last = np.r_[np.flatnonzero(np.diff(seg[order])), len(order) - 1]
        anchor = pos[order][seg_last]
        gap = pos - anchor[seg]
        decay = np.where(gap >= 0, gap / p.lambda_inh, -gap / p.lambda_before)
        w = sim[seg] * np.exp(-decay) * self._idf_w[ev_items]
        out = np.bincount(ev_items, weights=w, minlength=n_items)
        if p.remind > 0 and len(out):
            # re-views are frequent next events: lift the session's own items by recency
            out[uniq] += p.remind * out.max() * w_item
        return out

    def recommend(self, ctx: RecContext) -> list[Scored]:
        """Items for the visitor's session (``ctx.session`` then the seeds); seeds never returned."""
        seeds = [s for s in ctx.seeds if s in self.index]
        history = [self.index[s] for s in ctx.session if s in self.index]
        if not seeds and not history:
            return []
        exclude = set(ctx.seeds) | ctx.exclude
        if not history and len(seeds) == 1:
            j = self.index[seeds[0]]
            out = [
                Scored(str(self.items[c]), float(sc))
                for c, sc in zip(self.nb_items[j].tolist(), self.nb_scores[j].tolist(), strict=True)
                if sc > 0
            ]
            complete = len(out) < self.nb_items.shape[1]  # the list holds every positive-scored item
            out = [
                x for x in out if x.item_id not in exclude and (ctx.allowed is None or ctx.allowed(x.item_id))
            ]
            if complete or len(out) >= ctx.k:
                return out[: ctx.k]
        s = self.scores(np.array(history + [self.index[x] for x in seeds], dtype=np.int64))
        return top_k(s, self.items, ctx, exclude)

    # -- persistence -----------------------------------------------------------------------------

    def to_arrays(self) -> dict[str, np.ndarray]:
        names = ("items", "sess_ptr", "sess_items", "sess_time", "item_ptr", "item_sess", "idf")
        return {n: getattr(self, n) for n in names} | {"nb_items": self.nb_items, "nb_scores": self.nb_scores}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], params: dict) -> SessionKnnModel:
        return cls(**arrays, params=SessionKnnParams(**params))  # type: ignore[arg-type]

    def params_dict(self) -> dict:
        return asdict(self.params)


def top_k(scores: np.ndarray, items: np.ndarray, ctx: RecContext, exclude: set[str]) -> list[Scored]:
    """The best ``ctx.k`` positive-scored items not excluded and allowed, best first."""
    want = ctx.k + len(exclude) + 8
    order = np.argsort(-scores, kind="stable")
    cand = order[:want] if ctx.allowed is None else order
    out: list[Scored] = []
    for j in cand.tolist():
        if scores[j] <= 0 or len(out) >= ctx.k:
            break
        item = str(items[j])
        if item in exclude or (ctx.allowed is not None and not ctx.allowed(item)):
            continue
        out.append(Scored(item, float(scores[j])))
    return out


def train_session_knn(events: pl.DataFrame, params: SessionKnnParams | None = None) -> SessionKnnModel:
    """Train from view events with columns ``session_id``, ``item_id`` (str), ``ts`` (unix s, float).

    Sessions of a single event carry no co-view signal and are dropped. Vectorised (polars + numpy).
    Events of a session that share a ``ts`` keep their order in ``events``.
    """
    return fit_session_knn(session_table(events), params or SessionKnnParams())


def session_table(events: pl.DataFrame) -> pl.DataFrame:
    """The embedded engine's sessions: ``session_id`` (str), ``items`` (list of str, click order: by
    ``ts``, then position in ``events``), ``t`` (last click, unix s), sessions of two events or more.
    The Spark engine builds the same table (``aisle.recs.spark.also_view``)."""
    ev = (
        events.select(
            pl.col("session_id").cast(pl.Utf8), pl.col("item_id").cast(pl.Utf8), pl.col("ts").cast(pl.Float64)
        )
        .with_columns(n=pl.len().over("session_id"))
        .filter(pl.col("n") >= 2)
        .sort(["session_id", "ts"], maintain_order=True)
    )
    return ev.group_by("session_id", maintain_order=True).agg(
        pl.col("item_id").alias("items"), pl.col("ts").max().alias("t")
    )


def fit_session_knn(sessions: pl.DataFrame, params: SessionKnnParams) -> SessionKnnModel:
    """The model from a session table (:func:`session_table`), whichever engine built it: item and
    session indices, the item -> sessions index, IDF and the precomputed single-item neighbours.
    Sessions are indexed by recency (``t``, then ``session_id``), items by id."""
    sess = sessions.sort(["t", "session_id"])  # session index increases with recency
    items = np.array(sorted(sess["items"].explode().unique().to_list()))
    item_idx = pl.DataFrame({"item_id": items, "j": np.arange(len(items))})
    sess_len = sess["items"].list.len().to_numpy()
    sess_ptr = np.r_[0, np.cumsum(sess_len)].astype(np.int64)
    sess_items = (
        sess.select(pl.col("items").explode().alias("item_id"))
        .join(item_idx, on="item_id", how="left", maintain_order="left")["j"]
        .to_numpy()
        .astype(np.int64)
    )
    sess_time = sess["t"].to_numpy().astype(np.float64)
    # item -> distinct sessions, most recent first
    s_of_e = np.repeat(np.arange(len(sess_len)), sess_len)
    pairs = np.unique(np.stack([sess_items, -s_of_e]), axis=1)
    item_ptr = np.r_[0, np.cumsum(np.bincount(pairs[0], minlength=len(items)))].astype(np.int64)
    item_sess = (-pairs[1]).astype(np.int64)
    n_sess_with = np.diff(item_ptr)
    idf = np.log(len(sess_len) / np.maximum(n_sess_with, 1))
    empty_nb = np.zeros((len(items), 0), dtype=np.int64)
    model = SessionKnnModel(
        items,
        sess_ptr,
        sess_items,
        sess_time,
        item_ptr,
        item_sess,
        idf,
        empty_nb,
        empty_nb.astype(float),
        params,
    )
    model.nb_items, model.nb_scores = precompute_neighbours(model)
    return model


def precompute_neighbours(model: SessionKnnModel) -> tuple[np.ndarray, np.ndarray]:
    """Top ``params.neighbours`` items of every single-item session, shapes ``(I, n)`` (index, score)."""
    n = model.params.neighbours
    nb = np.zeros((len(model.items), n), dtype=np.int64)
    sc = np.zeros((len(model.items), n), dtype=np.float64)
    for j in range(len(model.items)):
        s = model.scores(np.array([j]))
        s[j] = 0.0
        top = np.argsort(-s, kind="stable")[:n]
        nb[j, : len(top)], sc[j, : len(top)] = top, s[top]
    return nb, sc
