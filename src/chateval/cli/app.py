"""The command line's app: its command groups, the options every command shares, and how a
refusal is reported. The commands are in run_commands.py (run, preview, check, sweep, bench),
import_commands.py (import), read_commands.py (rescore, report, export, compare),
setup_commands.py (models, roles, env) and cache_commands.py (cache)."""

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from chateval.errors import ChatEvalError


def _untyped_flags(params: list[Any]) -> list[Any]:
    """Flags take no value: --help shows none of typer's ``<bool>`` type column for them."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag:
            param.metavar = ""
    return params


class FlagsCommand(TyperCommand):
    """A command whose --help lists flags without a value type."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


# --help lists the commands in the order a user meets them, whichever module defines them.
COMMAND_ORDER = (
    "run",
    "preview",
    "check",
    "sweep",
    "bench",
    "import",
    "rescore",
    "report",
    "export",
    "models",
)


class FlagsGroup(TyperGroup):
    """A command group whose --help lists flags without a value type."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        first = [name for name in COMMAND_ORDER if name in names]
        return first + [name for name in names if name not in first]

    def invoke(self, ctx: Any) -> Any:
        """Run the command. A path the system refused it (a folder without permission, a
        read-only file system, a full disk) is one line naming the path and the reason, exit
        code 2, as every refusal: chateval's own writes say so themselves (core.textfile,
        core.file_access); this catches what reaches a path another way."""
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if _debug or exc.filename is None:
                raise
            paths = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
            raise fail(ChatEvalError(f"{paths}: {exc.strerror or exc}")) from None


# Markdown: a docstring's wrapped lines are one paragraph in --help, not lines cut mid-sentence.
app = typer.Typer(
    cls=FlagsGroup,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Multi-agent debate evaluation on local models.",
    epilog="Example: chateval run configs/quickstart.yaml (each command's --help has its own)",
)
models_app = typer.Typer(
    cls=FlagsGroup,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="List and prepare registry models.",
    epilog="Example: chateval models list",
)
app.add_typer(models_app, name="models")

ModelsDir = Annotated[
    Path | None,
    typer.Option(
        "--models-dir", help="Folder holding registry.yaml (default: $CHATEVAL_MODELS_DIR or ./models)."
    ),
]


Verbose = Annotated[
    bool,
    typer.Option(
        "-v",
        "--verbose",
        help="Show the engines' own output (vLLM, transformers, Ray, warnings) on the console "
        "instead of writing it to engine.log.",
    ),
]

_debug = False
REPORT_BAR_DELAY_S = 1.0


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of errors.")] = False,
) -> None:
    global _debug
    _debug = debug
    from chateval.core.file_access import restrict_new_files

    try:
        # Everything a command writes, and what its engines and a local Ray instance write,
        # is the owner's only (or the group's: CHATEVAL_FILE_ACCESS=group).
        restrict_new_files()
    except ChatEvalError as exc:
        raise fail(exc) from None


def fail(exc: ChatEvalError) -> typer.Exit:
    """Report a refusal in one line (exit code 2); with --debug, re-raise it for the traceback."""
    if _debug:
        raise exc
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)


ConfigPath = Annotated[Path, typer.Argument(metavar="CONFIG", help="YAML run config.")]
CacheDir = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="The judgment store's folder for this command (default: the config's `cache`; "
        "`chateval cache info` says where).",
    ),
]
NoCache = Annotated[
    bool,
    typer.Option("--no-cache", help="Judge every debate, reading and keeping none in the judgment store."),
]


def cache_choice(cache: Path | None, no_cache: bool) -> Path | bool | None:
    """The judgment store the command line asks for: a folder, none (False), or the config's
    (None)."""
    if cache is not None and no_cache:
        raise typer.BadParameter("--cache and --no-cache exclude each other")
    return False if no_cache else cache


Overrides = Annotated[
    list[str], typer.Option("--set", help="Override a config key: key=value (dotted, YAML value).")
]


class Stopped(KeyboardInterrupt):
    """SIGTERM (a scheduler's or `kill`'s stop), raised where the run is, so that it unwinds as
    on Ctrl-C: engines closed, finished steps kept in the journal."""


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """While the block runs, SIGTERM stops it as Ctrl-C does (Python's default ends the
    process where it stands, without a word)."""

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the cleanup short
        raise Stopped()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stopped(exc: KeyboardInterrupt, folder: Path | str) -> typer.Exit:
    """Say that a run was stopped and how to go on (exit 143 after SIGTERM, 130 after Ctrl-C)."""
    typer.secho(
        f"stopped: the finished steps are saved in {folder}; run the same command again to resume",
        fg=typer.colors.RED,
        err=True,
    )
    return typer.Exit(code=143 if isinstance(exc, Stopped) else 130)
