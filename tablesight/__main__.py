"""``python -m tablesight``: the command line."""

from tablesight.cli import main

main()
