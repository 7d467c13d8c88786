"""Every `chateval ...` command line in the docs' shell code blocks parses as the CLI has it
(issue 69): its subcommand exists, it uses no option the subcommand lacks, an option that takes a
value has one, and it gives no more arguments than the command takes; so the docs cannot name a
command or an option that was renamed or removed. Nothing runs: each line goes through the
typer app's argument parser only. The --help examples are checked in tests/cli/test_help_texts.py.

A doc line may be a synopsis: CONFIG and RUN are positional placeholders, [brackets] mark optional
text (checked as if given), ``...`` repeats, ``a|b`` lists alternatives (the first is parsed,
every option among the others is looked up too). Shell around the command is allowed: comments,
line continuations, ``NAME=value`` and ``nice``/``env`` before it, pipes, ``&&``, ``;``,
redirections, ``$(chateval ...)``, and ``$NAME`` for a variable set earlier in the same block."""

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from chateval.cli import app
from tests.support.helpers import ROOT

SHELL_FENCES = {"", "bash", "sh", "shell", "console", "zsh"}  # text fences show output, not commands
SEPARATORS = {"|", "||", "&&", ";", "&", "then", "do", "else", "(", ")", "{", "}"}
PREFIX_WORDS = {"nice", "env", "time", "exec", "$"}  # "$": a console block's prompt
REDIRECTION = re.compile(r"^\d*(>>?|<|>&|&>)")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
VARIABLE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
MENTIONS_CHATEVAL = re.compile(r"(^|[\s/(])chateval(\s|\)|;|$)")


@dataclass(frozen=True)
class DocCommand:
    """One `chateval` invocation in the docs: where it is and the words after ``chateval``."""

    where: str  # file:line of the line it starts on
    words: tuple[str, ...]


def doc_pages() -> list[Path]:
    """README.md and every page under docs/ (the generated reports in docs/results hold no commands
    today; read all the same, so one that gains some is checked)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def shell_blocks(text: str) -> Iterator[list[tuple[int, str]]]:
    """Each shell code block's logical lines (continuations joined), with the line each starts on."""
    block: list[tuple[int, str]] = []
    fence: str | None = None  # the open fence's language; None outside a fence
    start, so_far = 0, ""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("```"):
            if fence is None:
                fence, block, so_far = (line.strip()[3:].split() or [""])[0].lower(), [], ""
            else:
                if fence in SHELL_FENCES:
                    yield block
                fence = None
        elif fence in SHELL_FENCES:
            start = start if so_far else number
            if line.rstrip().endswith("\\"):
                so_far += line.rstrip()[:-1] + " "
            else:
                block.append((start, so_far + line))
                so_far = ""


def simple_commands(words: Sequence[str]) -> list[list[str]]:
    """A shell line's words cut into simple commands: at pipes, ``&&``, ``;`` and such, with each
    ``$(...)`` a command of its own and redirections dropped."""
    commands: list[list[str]] = [[]]
    outer: list[list[str]] = []  # the commands a ``$(`` interrupted, innermost last
    skip_target = False
    for word in words:
        if skip_target:
            skip_target = False
            continue
        if word in SEPARATORS and not (word == ")" and outer):
            commands.append([])
            continue
        while "$(" in word:
            before, word = word.split("$(", 1)
            if before:
                commands[-1].append(before)
            outer.append(commands[-1])
            commands.append([])
        closes = 0
        while outer and word.endswith(")") and closes < len(outer):
            word, closes = word[:-1], closes + 1
        ends = word.endswith(";")
        word = word.rstrip(";")
        if REDIRECTION.match(word):
            skip_target = REDIRECTION.sub("", word) == ""  # "> file": the next word is its target
        elif word:
            commands[-1].append(word)
        for _ in range(closes):
            commands.append(outer.pop())
        if ends:
            commands.append([])
    return [command for command in commands if command]


def chateval_invocations(text: str, name: str) -> Iterator[DocCommand]:
    """Every `chateval` command in the shell code blocks of ``text`` (the page ``name``)."""
    for block in shell_blocks(text):
        variables: dict[str, str] = {}
        for number, line in block:
            where = f"{name}:{number}"
            try:
                words = shlex.split(line, comments=True)
            except ValueError as error:  # an unclosed quote: a chateval line then cannot be read
                if MENTIONS_CHATEVAL.search(line):
                    yield DocCommand(where, (f"<not shell words: {error}>",))
                continue
            for command in simple_commands(words):
                assignments = [ASSIGNMENT.match(word) for word in command]
                if all(assignments):
                    variables.update((match[1], match[2]) for match in assignments if match)
                    continue
                while command and (command[0] in PREFIX_WORDS or ASSIGNMENT.match(command[0])):
                    command = command[1:]
                if command and Path(command[0]).name == "chateval":
                    yield DocCommand(where, tuple(_expanded(command[1:], variables)))


def _expanded(words: Sequence[str], variables: dict[str, str]) -> Iterator[str]:
    """``$NAME`` replaced by the words of the block's value for it (unknown ones stay as they are)."""
    for word in words:
        match = VARIABLE.match(word)
        if match and match.group(1) in variables:
            yield from shlex.split(variables[match.group(1)])
        else:
            yield word


def _option_names(command: Any) -> set[str]:
    return {"--help", *(name for param in command.params for name in (*param.opts, *param.secondary_opts))}


def _parsed(command: Any, said: str, args: list[str]) -> list[str]:
    """The arguments left once the command's own parser has read its options and arguments.
    Only the parser: no value is converted nor checked, so a placeholder such as RUN passes,
    and no callback runs. Raises the parser's UsageError."""
    _, left, _ = command.make_parser(command.context_class(command, info_name=said)).parse_args(args=args)
    return list(left)


def problem(words: Sequence[str], root: Any) -> str | None:
    """Why the CLI's parser refuses ``chateval WORDS`` (placeholders read as the module doc says),
    or None where it accepts them."""
    args, alternatives = [], []
    for word in words:
        word = word.lstrip("[").rstrip("]")
        if word not in ("", "...", "…"):
            first, *others = word.split("|")
            args.append(first)
            alternatives += [other for other in others if other.startswith("-")]
    command, said = root, "chateval"
    try:
        while isinstance(command, TyperGroup):
            args = _parsed(command, said, args)  # a group's own options, up to its command's name
            if not args:
                return None  # a group alone lists its commands
            name, *args = args
            if name not in command.commands:
                return f"`{said}` has no command `{name}` (it has: {', '.join(sorted(command.commands))})"
            command, said = command.commands[name], f"{said} {name}"
        extra = _parsed(command, said, args)
    except Exception as error:  # the parser's UsageError lives in typer's private copy of click
        return f"`{said}`: {getattr(error, 'format_message', error.__str__)()}"
    if unknown := sorted(set(alternatives) - _option_names(command)):
        return f"`{said}` has no option {', '.join(unknown)}"
    if extra:
        return f"`{said}` takes no more arguments: {' '.join(extra)}"
    return None


def _words_of(block: str) -> list[tuple[str, ...]]:
    return [command.words for command in chateval_invocations(f"```bash\n{block}\n```\n", "page.md")]


def test_commands_are_found_in_the_shell_around_them() -> None:
    synopsis = ".venv/bin/chateval run CONFIG [-o OUTDIR]   # a comment --not-an-option"
    assert _words_of(synopsis) == [("run", "CONFIG", "[-o", "OUTDIR]")]
    ray = "env $(.venv/bin/chateval env --ray) .venv/bin/ray start --head"
    assert _words_of(ray) == [("env", "--ray")]
    chain = "bash setup.sh && A=1 nice chateval report RUN > out.txt | head -3; chateval cache info"
    assert _words_of(chain) == [("report", "RUN"), ("cache", "info")]
    continued = 'S="--set a=1 --set b=2"\nchateval run \\\n    C $S -o D'
    assert _words_of(continued) == [("run", "C", "--set", "a=1", "--set", "b=2", "-o", "D")]
    assert _words_of("git show x:src/chateval/cli/app.py > /tmp/chateval") == []
    # Python and output blocks hold no commands; a continued command is named by its first line.
    page = "prose\n```python\nchateval.run()\n```\n```text\nchateval run: done\n```\n"
    page += "```\nchateval \\\n run C\n```\n"
    assert [command.where for command in chateval_invocations(page, "p.md")] == ["p.md:9"]


def test_a_wrong_command_or_option_is_named() -> None:
    root = typer.main.get_command(app)
    assert problem(("run", "CONFIG", "[-o", "OUTDIR]", "[--set", "key=value", "...]"), root) is None
    assert problem(("export", "RUN", "[--what", "comparisons|pairs]", "[--format", "csv|json]"), root) is None
    assert problem(("--debug", "cache", "info", "[--json]"), root) is None
    assert "No such option: --out" in (problem(("run", "CONFIG", "--out", "X"), root) or "")
    assert "`chateval cache` has no command `purge`" in (problem(("cache", "purge"), root) or "")
    assert "`chateval` has no command `rerun`" in (problem(("rerun", "CONFIG"), root) or "")
    assert "No such option: --bogus" in (problem(("--bogus", "run", "CONFIG"), root) or "")
    assert "has no option --csv" in (problem(("cache", "info", "--json|--csv"), root) or "")
    assert "requires an argument" in (problem(("run", "CONFIG", "-o"), root) or "")
    assert "takes no more arguments: X" in (problem(("cache", "info", "X"), root) or "")


def test_every_chateval_line_of_the_docs_parses() -> None:
    root = typer.main.get_command(app)
    found = [
        command
        for page in doc_pages()
        for command in chateval_invocations(
            page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()
        )
    ]
    assert len(found) > 50, "the docs' command lines were not found"
    wrong = [f"{command.where}: {said}" for command in found if (said := problem(command.words, root))]
    assert not wrong, "\n".join(wrong)
