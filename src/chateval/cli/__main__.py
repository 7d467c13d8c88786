"""``python -m chateval.cli``: the console entry point."""

from chateval.cli import main

main()
