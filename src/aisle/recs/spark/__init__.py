"""Training on Apache Spark: the engine-specific counting of each model, over Parquet in object storage.

Each module counts what one model's embedded trainer counts, with Spark DataFrames, and hands the counts
to the model's shared scoring (``aisle.recs.models``), so both engines share one definition of the maths:

* ``bought_together``: :class:`~aisle.recs.models.bought_together.CoPurchaseCounts` (FBT);
* ``also_view``: the session table of CUSTOMERS_ALSO_VIEW;
* ``bundles``: a :class:`~aisle.recs.models.bundles.BundleCounter` (BUNDLE_RECOMMENDATIONS);
* ``good_better_best``: each leaf's price tier bounds (GOOD_BETTER_BEST);
* ``training``: ``aisle train --engine spark``, one entry point over the four;
* ``session``: the Spark session (``local[*]``, ``--master`` or ``SPARK_MASTER``), the column ops of
  the shared formulas and Parquet input.

Imported only by ``aisle train --engine spark`` and its tests: the services never import pyspark. Needs
the ``spark`` extra (``pip install -e '.[spark]'``) and Java 17 or newer.
"""
