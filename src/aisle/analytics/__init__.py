"""Outcomes of Aisle's answers: attribution tokens, the answer and event log in the bucket (Parquet),
and the analytics reports over it (DuckDB).

Front door for writers: :class:`~aisle.analytics.recorder.Recorder` over a
:class:`~aisle.analytics.log.ParquetLog`; for readers: :class:`~aisle.analytics.reports.AnalyticsReports`.
"""
