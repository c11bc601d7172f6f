"""A ranker's LightGBM model compiled to machine code (lleaves, LLVM) for serving, issue 43.

LightGBM's ``Booster.predict`` pays a fixed cost per call (input checks, its thread pool, the output
buffer) that dwarfs walking 150 trees for the ~120 candidates of one search: measured on the Home Depot
demo ranker (150 trees, 30 features, 120 rows with 10% missing values, one thread, the same loaded
machine, alternated): LightGBM 1.6-4.0 ms a call, lleaves 0.21 ms, scores equal to 5e-15.

Compiling takes seconds (6.5 s on that machine), so it never happens on a search's path: the first
search of a model starts it on a thread and is scored by LightGBM, as every search is until the
compiled model is ready. The shared object is kept per host under ``<data dir>/rankers/<digest>.so``
(the digest of the model text), compiled once under the host's lock and loaded by every worker. Where
lleaves cannot be imported or the compile fails, LightGBM keeps scoring (logged once).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from aisle.core.mapped import host_lock

log = logging.getLogger("aisle.search")

Predict = Callable[[np.ndarray], np.ndarray]


class CompiledModel:
    """One model text's compiled predictor, made in the background (module docstring).

    Args:
        model_text: the LightGBM model as ``Booster.model_to_string`` writes it.
        cache_dir: where the host keeps compiled models (created when needed).
    """

    def __init__(self, model_text: str, cache_dir: Path) -> None:
        self.digest = hashlib.sha1(model_text.encode()).hexdigest()[:16]
        self._text = model_text
        self._dir = Path(cache_dir)
        self._lock = threading.Lock()
        self._started = False
        self._predict: Predict | None = None

    def predictor(self) -> Predict | None:
        """The compiled predictor (features (n, F) -> scores (n,) float64) once ready, else None
        (the first call starts compiling on a thread)."""
        if self._predict is not None or self._started:
            return self._predict
        with self._lock:
            if not self._started:
                self._started = True
                threading.Thread(target=self._compile, name=f"lleaves-{self.digest}", daemon=True).start()
        return self._predict

    def wait(self, timeout_s: float = 120.0) -> Predict | None:
        """Compile now if needed and wait for it (tests, warm-up): the predictor, or None on failure."""
        self.predictor()
        for thread in threading.enumerate():
            if thread.name == f"lleaves-{self.digest}":
                thread.join(timeout_s)
        return self._predict

    def _compile(self) -> None:
        try:
            import lleaves  # LLVM through llvmlite: loaded only where a ranker is served

            self._dir.mkdir(parents=True, exist_ok=True)
            source, library = self._dir / f"{self.digest}.txt", self._dir / f"{self.digest}.so"
            with host_lock(self._dir / f".{self.digest}.lock"):  # one compile per host; others load it
                if not source.exists():
                    partial = source.with_suffix(".txt.tmp")
                    partial.write_text(self._text)
                    partial.replace(source)
                model = lleaves.Model(model_file=str(source))
                if library.exists():
                    model.compile(cache=str(library))  # loads the shared object
                else:  # written beside and renamed: a worker never loads half a library
                    partial = library.with_suffix(f".{os.getpid()}.so")
                    model.compile(cache=str(partial))
                    partial.replace(library)
        except Exception:  # ImportError, an LLVM failure, a full disk: LightGBM keeps scoring
            log.warning(
                "ranker %s: compiling with lleaves failed, LightGBM scores", self.digest, exc_info=True
            )
            return

        def predict(features: np.ndarray) -> np.ndarray:
            rows = np.ascontiguousarray(features, dtype=np.float64)
            return np.asarray(model.predict(rows, n_jobs=1), dtype=np.float64)

        self._predict = predict
