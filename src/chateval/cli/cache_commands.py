"""``chateval cache``: where the judgment store is, what it holds, and pruning it."""

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from chateval.cli.app import FlagsCommand, FlagsGroup, app, fail
from chateval.errors import ChatEvalError

cache_app = typer.Typer(
    cls=FlagsGroup,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Where the judgment store is, what it holds, and pruning it.",
    epilog="Example: chateval cache info",
)
app.add_typer(cache_app, name="cache")

StoreDir = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        metavar="DIR",
        help="The store's folder (default: $CHATEVAL_CACHE, else $XDG_CACHE_HOME/chateval, "
        "else ~/.cache/chateval).",
    ),
]


def _store_folder(cache: Path | None) -> Path | None:
    """``--cache`` or the default folder; None: the store is turned off."""
    from chateval.store.location import default_store_folder

    return cache if cache is not None else default_store_folder()


def _off_line() -> str:
    from chateval.store.location import CACHE_SETTING

    return (
        f"the judgment store is off ({CACHE_SETTING}=off): unset {CACHE_SETTING}, or set it to a "
        "folder, to turn it on; or pass --cache DIR"
    )


def size_text(size: int) -> str:
    """A file size as a person reads it: ``12.3 MB``."""
    amount = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if amount < 1000 or unit == "GB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1000
    raise AssertionError("unreachable")


def _debates(count: int) -> str:
    return f"{count:,} {'debate' if count == 1 else 'debates'}"


def _when(stamp: str) -> str:
    """A stored ISO time, to the minute, as ``2025-06-01 12:00``."""
    return stamp[:16].replace("T", " ")


@cache_app.command("info", cls=FlagsCommand, epilog="Example: chateval cache info --json")
def cache_info(
    cache: StoreDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the same as one JSON object.")] = False,
) -> None:
    """Where the judgment store is, its size on disk, and its entries per panel (a missing store
    is not made)."""
    from chateval.store.judgments import STORE_FILE, JudgmentStore

    folder = _store_folder(cache)
    if folder is None:
        typer.echo(json.dumps({"enabled": False}) if as_json else _off_line())
        return
    path = folder / STORE_FILE
    facts: dict[str, Any] = {"enabled": True, "folder": str(folder), "file": str(path)}
    if not path.exists():
        if as_json:
            typer.echo(json.dumps({**facts, "exists": False, "bytes": 0, "entries": 0, "panels": []}))
        else:
            typer.echo(f"no judgment store at {path} yet: the first run that judges a debate makes it")
        return
    try:
        with JudgmentStore(folder) as store:
            summary = store.summary()
    except ChatEvalError as exc:
        raise fail(exc) from None
    if as_json:
        panels = [vars(panel) for panel in summary.panels]
        facts |= {"exists": True, "bytes": summary.bytes, "entries": summary.entries, "panels": panels}
        typer.echo(json.dumps(facts, ensure_ascii=False))
        return
    typer.echo(f"judgment store: {summary.path}")
    typer.echo(f"size on disk: {size_text(summary.bytes)}, {_debates(summary.entries)}")
    if not summary.panels:
        return
    rows = [("panel", "debates", "oldest (UTC)", "newest (UTC)", "description")] + [
        (p.panel[:12], f"{p.entries:,}", _when(p.first), _when(p.last), p.description or "-")
        for p in summary.panels
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for fingerprint, debates, oldest, newest, description in rows:
        typer.echo(
            f"{fingerprint:<{widths[0]}}  {debates:>{widths[1]}}  {oldest:<{widths[2]}}  "
            f"{newest:<{widths[3]}}  {description}"
        )


@cache_app.command("prune", cls=FlagsCommand, epilog="Example: chateval cache prune --older-than 2025-01-01")
def cache_prune(
    cache: StoreDir = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", metavar="YYYY-MM-DD", help="Delete the debates stored before this day."),
    ] = None,
    panel: Annotated[
        str | None,
        typer.Option(
            "--panel", metavar="PREFIX", help="Delete one panel's debates (its fingerprint's start)."
        ),
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="Delete every debate.")] = False,
) -> None:
    """Delete debates from the judgment store: those stored before a day (local time), those of
    one panel (both: the panel's older ones), or all of them; the file shrinks. The runs that
    would have reused them judge them again."""
    from chateval.store.database import StoreUnusable
    from chateval.store.judgments import STORE_FILE, JudgmentStore, discard

    try:
        before = _day(older_than)
        if before is None and panel is None and not everything:
            raise ChatEvalError(
                "cache prune: say what to delete: --older-than YYYY-MM-DD, --panel PREFIX or --all"
            )
        if everything and (before is not None or panel is not None):
            raise ChatEvalError("cache prune: --all deletes every debate; give it alone")
        folder = _store_folder(cache)
        if folder is None:
            raise ChatEvalError(_off_line())
        path = folder / STORE_FILE
        if not path.exists():
            raise ChatEvalError(f"no judgment store at {path}: nothing to prune")
        try:
            store = JudgmentStore(folder)
        except StoreUnusable:
            if not everything:
                raise
            for gone in discard(folder):
                typer.echo(f"deleted {gone}")
            typer.echo("the next run starts a new judgment store there")
            return
        with store:
            try:
                deleted = store.prune(before=before, panel=panel, everything=everything)
            except ValueError as exc:
                raise ChatEvalError(f"cache prune: {exc}") from None
            summary = store.summary()
    except ChatEvalError as exc:
        raise fail(exc) from None
    typer.echo(
        f"deleted {_debates(deleted)}; {summary.path} now holds {_debates(summary.entries)} "
        f"({size_text(summary.bytes)})"
    )


def _day(text: str | None) -> datetime | None:
    """``--older-than``'s day, at local midnight; ChatEvalError when it is not YYYY-MM-DD."""
    if text is None:
        return None
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d")
    except ValueError:
        raise ChatEvalError(f"cache prune: --older-than {text!r}: give a day as YYYY-MM-DD") from None
