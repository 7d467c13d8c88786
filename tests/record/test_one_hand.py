"""The run folder has one hand on it: only the record package (``chateval.record``) names a run
file as a path, so every read and write of a run folder goes through ``RunFolder`` (scripts
included: they read through ``chateval.load_finished_run``)."""

import ast
from pathlib import Path

from chateval.record.files import RunFolder
from tests.support.helpers import ROOT

RECORD = ROOT / "src" / "chateval" / "record"


def _run_file_names() -> set[str]:
    """The names of the files a run folder holds, as RunFolder spells them."""
    folder = RunFolder(Path("run"))
    return {value.name for value in vars(folder).values() if isinstance(value, Path) and value.suffix}


def _names_used_as_paths(source: Path, names: set[str]) -> list[str]:
    """Each string constant of ``source`` that is exactly a run file's name (``path /
    "metrics.json"``, ``open("run.json")``), with its line; messages that mention a name
    inside a sentence are not paths."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    return [
        f"{source.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]


def test_only_the_record_names_a_run_file() -> None:
    names = _run_file_names()
    assert {"metrics.json", "run.json", "journal.jsonl", "verdicts.jsonl"} <= names
    sources = [
        path
        for folder in (ROOT / "src" / "chateval", ROOT / "scripts")
        for path in sorted(folder.rglob("*.py"))
        if RECORD not in path.parents
    ]
    found = [hit for source in sources for hit in _names_used_as_paths(source, names)]
    assert not found, "run files named outside chateval.record (use RunFolder):\n" + "\n".join(found)
