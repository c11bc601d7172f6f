"""``python -m aisle.cli``: the same as the ``aisle`` script."""

from aisle.cli import main

main()
