"""Benchmarks: each ``bench_*.py`` module has ``main(data_dir: Path) -> None`` that prints its figures."""
