"""Recommendation quality and cost on the full shared data (the issue's bars), printed, never failing.

Runs the same measurements as ``aisle eval recs``: YooChoose next-item HR@20 / MRR@20 and prediction
latency, Complete Journey FBT HR@10 / recall@10 with the training time and peak memory of every CJ
model, and fashion SIMILAR_ITEMS attribute agreement (encodes 44k products: a few minutes on 2 cores);
plus how much FBT would gain from seeing half of the evaluation weeks (:func:`offline.fbt_headroom`).
"""

from __future__ import annotations

import pathlib


def _show(title: str, figures: dict) -> None:
    print(title, flush=True)
    for k, v in figures.items():
        print(f"  {k:<34} {v:.4f}" if isinstance(v, float) else f"  {k:<34} {v}", flush=True)


def main(data_dir: pathlib.Path) -> None:
    from aisle.recs.evaluation import offline

    if (data_dir / "yoochoose").exists():
        _show(
            "CUSTOMERS_ALSO_VIEW yoochoose (bars HR@20 0.69, MRR@20 0.37, p99 2 ms)",
            offline.eval_yoochoose(data_dir),
        )
    else:
        print(f"skipped yoochoose: {data_dir / 'yoochoose'} missing")
    _show(
        "FREQUENTLY_BOUGHT_TOGETHER completejourney (bars HR@10 0.60, recall@10 0.125, 90 s, 4 GB)",
        offline.eval_completejourney(),
    )
    for validation in (True, False):
        _show(
            f"FBT headroom on the {'validation' if validation else 'test'} split: scored on half of the "
            "evaluation baskets, trained without / with the other half",
            offline.fbt_headroom(validation=validation, progress=lambda _: None),
        )
    if (data_dir / "fashion").exists():
        products = offline.read_fashion(data_dir)
        _show("SIMILAR_ITEMS fashion (bars type 0.92, gender 0.97)", offline.eval_similar(products))
    else:
        print(f"skipped fashion: {data_dir / 'fashion'} missing")
