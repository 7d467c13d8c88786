"""--help reads as prose: a docstring's wrapped lines join into one paragraph instead of breaking
mid-sentence where the source wrapped them."""

import shlex
from typing import Any

import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from chateval.cli import app


def test_help_joins_wrapped_docstring_lines() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    said = result.output
    # preview's docstring wraps after "with"; sweep's after "goes"; bench's after "engines".
    assert "one item's debate, with placeholders where earlier utterances go" in said
    assert "(the engines' output goes to OUTDIR/engine.log unless --verbose)" in said
    assert "limit, same engines (the engines' output goes to NAME.engine.log" in said
    run = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "250"}).output
    assert "the engines' own output goes to engine.log in the run folder" in run


def test_flags_show_no_value_type() -> None:
    """typer 0.29 labels every flag ``<bool>`` as if it took a value; chateval's --help does not."""
    for command in ([], ["run"], ["models", "prepare"]):
        said = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "250"}).output
        assert "--help" in said
        assert "<bool>" not in said, command
    run = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "250"}).output
    assert "<path>" in run  # options that take a value keep their type


def _commands(group: TyperGroup, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``group``, with the words that name it."""
    found: list[tuple[tuple[str, ...], Any]] = [(path, group)]
    for name, command in group.commands.items():
        if isinstance(command, TyperGroup):
            found += _commands(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


def test_every_command_shows_an_example_its_parser_accepts() -> None:
    """Each --help ends with one example (issue 69), and the example's options and arguments
    are the command's own: parsed as typed, so an option renamed later fails here."""
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    for path, command in _commands(root):
        line = command.epilog or ""
        assert line.startswith("Example: "), (path, line)
        example = line.split("chateval ", 1)[1].split(")")[0].split(" (")[0]  # the command line alone
        words = shlex.split(example)
        assert tuple(words[: len(path)]) == path, (path, example)
        command.make_context(" ".join(("chateval", *path)), words[len(path) :])
        said = _help(*path)
        assert "Example: " in said and example in said, path


def _help(*path: str) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.output
