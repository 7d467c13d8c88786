"""docs/cli.md, generated from the typer app so that it cannot drift from the commands.

Every command and command group in the app's order (as ``chateval --help`` lists them), each
with its usage line, its help text (Markdown, as --help renders it), its arguments and options,
and the example its --help ends with. Read from the command objects alone, never from a
rendered --help: the page does not depend on the terminal's width, the environment or the
machine. ``python scripts/write_reference_docs.py`` rewrites it; a test checks that the
committed page is what this module generates.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

from chateval.cli import app

HEADER = """# Command-line reference

Every command of `chateval` with its arguments, options and an example, as its `--help` shows
them. Generated from the command-line app by `python scripts/write_reference_docs.py`: do not
edit by hand. In a usage line, `{NAME}` is a required argument, `[NAME]` an optional one,
`...` after it means one or more, and `[OPTIONS]` the options listed below it. Every command
also takes `--help`. The keys that `--set` overrides are in the [config reference](config.md).
"""

# "Example: COMMAND" or "Example: COMMAND (a remark)": every epilog of the app (issue 69).
EXAMPLE = re.compile(r"^Example: (?P<command>.+?)(?: \((?P<remark>[^()]*)\))?$")


def _cell(text: str) -> str:
    """``text`` as one cell of a Markdown table: on one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _commands(command: Any, ctx: typer.Context) -> Iterator[tuple[Any, typer.Context]]:
    """``command`` and every visible command under it, depth first in the app's order."""
    yield command, ctx
    if isinstance(command, TyperGroup):
        for name in command.list_commands(ctx):
            sub = command.commands[name]
            if not sub.hidden:
                yield from _commands(sub, typer.Context(sub, info_name=name, parent=ctx))


def _anchor(path: str) -> str:
    """The heading's anchor (lower case, spaces to dashes), as MkDocs and GitHub make it."""
    return path.lower().replace(" ", "-")


def _type_word(annotation: Any) -> str:
    """The value's type as --help names it (``path``, ``str``, ``float``), one value of a list."""
    element = get_args(annotation)[0] if get_origin(annotation) is list else annotation
    return "path" if element is Path else str(getattr(element, "__name__", element))


def _value(param: Any) -> str:
    """What an option takes or an argument is: its metavar or type, with its range."""
    if isinstance(param, TyperOption) and param.is_flag:
        return "flag"
    shown = (param.metavar if isinstance(param, TyperOption) else None) or _type_word(
        param.type_descriptor.annotation
    )
    bounds = [f"at least {param.min}"] if param.min is not None else []
    bounds += [f"at most {param.max}"] if param.max is not None else []
    return f"{shown} ({', '.join(bounds)})" if bounds else shown


def _default(param: Any) -> str:
    """The default shown in the table: required, a flag's off, or a value given; blank when
    the option is simply left out (its help says what that means)."""
    if param.required:
        return "required"
    if isinstance(param, TyperOption) and param.is_flag:
        return "off" if not param.default else "on"
    if param.default is None or param.default == []:
        return ""
    return f"`{param.default}`"


def _name(param: Any) -> str:
    """An argument's name as its usage line has it; an option's names, short first."""
    if isinstance(param, TyperArgument):
        many = param.metavar is None and param.nargs != 1
        return f"`{param.display_name_raw}{'...' if many else ''}`"
    return ", ".join(f"`{name}`" for name in (*param.opts, *param.secondary_opts))


def _table(title: str, params: list[Any]) -> list[str]:
    if not params:
        return []
    lines = [f"| {title} | value | default | description |", "| --- | --- | --- | --- |"]
    for param in params:
        repeat = " Repeatable." if isinstance(param, TyperOption) and param.multiple else ""
        lines.append(
            f"| {_name(param)} | {_cell(_value(param))} | {_default(param)} | "
            f"{_cell((param.help or '') + repeat)} |"
        )
    return [*lines, ""]


def _example(epilog: str) -> list[str]:
    """The epilog: its example command as a shell block (the docs' command test parses it)."""
    match = EXAMPLE.match(" ".join(epilog.split()))
    if match is None:
        return [epilog, ""]
    remark = f" ({match['remark']})" if match["remark"] else ""
    return [f"Example{remark}:", "", "```bash", match["command"], "```", ""]


def _section(command: Any, ctx: typer.Context) -> list[str]:
    """One command's or group's section."""
    path = ctx.command_path
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    lines = [f"## {path}", "", "```text", usage, "```", ""]
    lines += [(command.help or "").split("\f")[0].strip(), ""]  # click's \f: the rest is not help
    params = [p for p in command.get_params(ctx) if not p.hidden and p.name != "help"]
    lines += _table("argument", [p for p in params if isinstance(p, TyperArgument)])
    lines += _table("option", [p for p in params if isinstance(p, TyperOption)])
    if isinstance(command, TyperGroup):
        names = [name for name in command.list_commands(ctx) if not command.commands[name].hidden]
        links = [f"[{name}](#{_anchor(f'{path} {name}')})" for name in names]
        lines += [f"Commands: {', '.join(links)}.", ""]
    return lines + (_example(command.epilog) if command.epilog else [])


def cli_reference() -> str:
    """The whole of docs/cli.md."""
    root = typer.main.get_command(app)
    sections = [
        line
        for command, ctx in _commands(root, typer.Context(root, info_name="chateval"))
        for line in _section(command, ctx)
    ]
    return "\n".join([HEADER, *sections]).rstrip() + "\n"
