"""Helpers shared by the tests and the benchmarks (``from tests.support.<module> import ...``).

They build small tenants, keys and servers for tests; none of it ships in the wheel.
"""
