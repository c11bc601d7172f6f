"""A/B experiments: what a variant changes, which visitor sees which variant, and the statistics.

Pure parts only (no HTTP, no analytics queries): :mod:`.model` (the stored experiment),
:mod:`.assignment` (visitor -> variant by a salted hash), :mod:`.store` (experiments in the bucket, and
the running ones as serving processes see them), :mod:`.statistics` (tests, intervals, SRM, sample size).
"""
