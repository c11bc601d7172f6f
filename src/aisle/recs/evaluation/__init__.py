"""Offline evaluation of recommendation models, apart from serving (no HTTP, nothing a service imports).

* ``protocols``: the protocols of ``../shared/data/README.md`` (session next-item HR@K / MRR@K, basket
  completion HR@K / recall@K, attribute agreement);
* ``offline``: the measurements on the shared data that ``aisle eval recs`` and ``bench/`` print
  (``from aisle.recs.evaluation import offline``).

A deployed model's items and registry metrics for quality checks are served by the predict engine
(:mod:`aisle.recs.serving.evaluation`, ``POST /evaluation``).
"""

from aisle.recs.evaluation.protocols import attribute_agreement, basket_completion, session_next_item

__all__ = ["attribute_agreement", "basket_completion", "session_next_item"]
