"""The command line: run, preview, check, sweep, bench (cli/run_commands.py), rescore, report,
export (cli/read_commands.py), models, roles and env (cli/setup_commands.py), on one typer app
(cli/app.py)."""

from chateval.cli import read_commands, run_commands, setup_commands
from chateval.cli.app import app

__all__ = ["app", "main", "read_commands", "run_commands", "setup_commands"]


def main() -> None:
    """Console entry point."""
    app()
