"""The command line: run, preview, check, sweep, bench (cli/run_commands.py), import
(cli/import_commands.py), rescore, report, export, compare (cli/read_commands.py), models, roles
and env (cli/setup_commands.py), cache (cli/cache_commands.py), on one typer app (cli/app.py)."""

from chateval.cli import cache_commands, import_commands, read_commands, run_commands, setup_commands
from chateval.cli.app import app

__all__ = [
    "app",
    "cache_commands",
    "import_commands",
    "main",
    "read_commands",
    "run_commands",
    "setup_commands",
]


def main() -> None:
    """Console entry point."""
    app()
