"""Recommendations: models, their training and life cycle, and serving. No HTTP here.

* ``models/``: one recommender per model type (spec "Model types"), behind ``models.base.Recommender``;
* ``training/`` trains and registers a model from the data sets that ``events`` reads; ``evaluation/``
  holds the offline protocols (HR@20, MRR@20, recall@10) and ``evaluation.offline`` the measurements
  on the shared data that ``aisle eval recs`` and ``bench/`` print; neither is imported by serving;
* ``registry`` (records and immutable artifacts), ``loading`` (artifact -> recommender),
  ``deployments`` (which models are served; the deploy and undeploy jobs) and ``jobs`` (the job
  runner): what the edit service changes;
* ``containers`` (versioned placements, each a list of model slots) and ``ingest`` (visitor events into
  the event store): also written through the edit service;
* ``editing``: the edit service's front door, ``from aisle.recs.editing import RecsEditor``;
* ``serving/``: the predict engine, front door ``from aisle.recs.serving import PredictEngine``;
* ``diversity``: MMR re-ranking, shared by a container's slot options and serving;
* ``popularity`` (per-product popularity and trending from shopper events) and ``popularity_store``
  (its versioned artifact, pointer last): refreshed by the edit service's job and ``aisle train``,
  read by serving to order the backfill of short lists.

Command-line and demo code live in ``aisle.cli.recs`` and ``aisle.demo``.
"""
