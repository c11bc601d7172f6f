"""Offline training for search, apart from serving: the learned ranker fitted on graded judgments
(:mod:`aisle.search.training.ranker`). Only the command line, the demo builder and benchmarks import
it; the search services never do."""
