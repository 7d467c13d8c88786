"""Every command that writes where the user says (export -o, report -o, compare -o, import -o,
run -o, rescore --into) refuses a place it cannot write in one line
naming the path and the reason, exit code 2, and leaves no temporary file behind.

A read-only place is made one of two ways, whichever this machine allows: as root (where
permissions do not stop a write) a read-only bind mount in a user namespace of its own
(``unshare -rm``), the commands run inside it; as another user a folder without write
permission. Neither possible: the tests that need one skip, saying why.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chateval.cli import app
from chateval.core.textfile import write_text
from tests.support.helpers import CONFIGS_DIR, ROOT

RESULTS = ROOT / "docs" / "results"
RUN = RESULTS / "faireval_single"  # committed run folders, only read here
OTHER_RUN = RESULTS / "faireval_chateval"
SYSTEMS_RUN = RESULTS / "faireval_systems"

# Runs the commands in one process (the CLI in-process, as a user's shell would run each) and
# prints each one's exit code and output as JSON.
_COMMANDS = """
import json, sys
from typer.testing import CliRunner
from chateval.cli import app
results = []
for args in json.loads(sys.argv[1]):
    result = CliRunner().invoke(app, args)
    results.append({"code": result.exit_code, "output": result.output})
print(json.dumps(results))
"""
# Inside a new user and mount namespace: the folder bound read-only onto itself, then the commands.
_IN_NAMESPACE = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'


@pytest.fixture
def read_only(tmp_path: Path) -> tuple[Path, list[str]]:
    """A read-only folder, and the command prefix under which it is read-only."""
    folder = tmp_path / "read_only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return folder, []
    if shutil.which("unshare") is None:
        pytest.skip(
            "running as root, where permissions do not stop a write, and no unshare for a read-only mount"
        )
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", _IN_NAMESPACE, "sh", str(folder), "touch", str(folder / "probe")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if "Read-only file system" not in probe.stderr:
        pytest.skip(
            f"running as root, and unshare -rm cannot make a read-only mount here: {probe.stderr.strip()}"
        )
    return folder, ["unshare", "-rm", "sh", "-c", _IN_NAMESPACE, "sh", str(folder)]


def run_commands(prefix: list[str], commands: list[list[str]]) -> list[dict[str, object]]:
    """Each command's exit code and output, run where ``prefix`` makes the folder read-only."""
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _COMMANDS, json.dumps(commands)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    results: list[dict[str, object]] = json.loads(done.stdout)
    return results


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_every_writer_refuses_a_read_only_place_in_one_line(read_only: tuple[Path, list[str]]) -> None:
    folder, prefix = read_only
    # Soft verdicts off: their score tokens would be checked with the tokenizer first (slower);
    # transformers: vLLM need not be installed.
    quickstart = [
        str(CONFIGS_DIR / "quickstart.yaml"),
        *("--set", "verdict.soft=false", "--set", "backend=transformers"),
    ]
    # (command, the start of its one line; compare prints its tables first: its last line)
    cases = [
        (["export", str(RUN), "-o", f"{folder}/rows.csv"], f"error: cannot write {folder}/rows.csv: "),
        (
            ["export", str(RUN), "-o", f"{folder}/sub/rows.csv"],
            f"error: cannot create the folder {folder}/sub: ",
        ),
        (
            ["export", str(SYSTEMS_RUN), "--what", "leaderboard", "-o", f"{folder}/board.json"],
            f"error: cannot write {folder}/board.json: ",
        ),
        (["report", str(RUN), "-o", str(folder)], f"error: cannot write {folder}/"),
        (["report", str(RUN), "-o", f"{folder}/sub"], f"error: cannot create the folder {folder}/sub: "),
        (
            ["compare", str(RUN), str(OTHER_RUN), "-o", f"{folder}/compared"],
            f"error: cannot create the folder {folder}/compared: ",
        ),
        (
            ["import", str(CONFIGS_DIR / "import" / "generic_pairwise.yaml"), "-o", f"{folder}/imported"],
            f"error: cannot create the folder {folder}/imported: ",
        ),
        (["run", *quickstart, "-o", f"{folder}/run"], f"error: cannot create the folder {folder}/run: "),
        (["run", *quickstart, "-o", str(folder)], f"error: {folder}"),
        (
            ["rescore", str(RUN), "--label-fraction", "0.5", "--into", f"{folder}/fewer"],
            f"error: cannot create the folder {folder}/fewer: ",
        ),
    ]
    results = run_commands(prefix, [args for args, _ in cases])
    for (args, start), result in zip(cases, results, strict=True):
        output = str(result["output"])
        lines = output.splitlines()
        assert result["code"] == 2, (args, output)
        assert "Traceback" not in output, (args, output)
        if args[0] != "compare":
            assert len(lines) == 1, (args, output)
        assert lines[-1].startswith(start), (args, output)
        assert lines[-1].endswith(
            ("Read-only file system", "Permission denied", "(Read-only file system)", "(Permission denied)")
        ), (args, output)
    assert list(folder.iterdir()) == []


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The temporary file is made, then cannot take the name (a folder has it): it is removed."""
    taken = tmp_path / "rows.csv"
    taken.mkdir()
    result = CliRunner().invoke(app, ["export", str(RUN), "-o", str(taken)])
    assert result.exit_code == 2
    assert result.output == f"error: cannot write {taken}: Is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_an_interrupted_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text(tmp_path / "report.md", "# half")
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_folder_goes_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("mine")
    result = CliRunner().invoke(app, ["export", str(RUN), "-o", str(tmp_path / "out" / "rows.csv")])
    assert result.exit_code == 2
    assert (
        result.output == f"error: cannot create the folder {tmp_path / 'out'}: a file of that name is there\n"
    )
    assert (tmp_path / "out").read_text() == "mine"


def test_a_refused_path_outside_chateval_writes_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What reaches a path another way than chateval's writers (a dependency's file) is one
    line too, through the command line's mapping; --debug shows the traceback."""
    from chateval.reporting import export

    def refused(*args: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path / "cache"))

    monkeypatch.setattr(export, "export_run", refused)
    result = CliRunner().invoke(app, ["export", str(RUN)])
    assert result.exit_code == 2
    assert result.output == f"error: {tmp_path / 'cache'}: Permission denied\n"
    result = CliRunner().invoke(app, ["--debug", "export", str(RUN)])
    assert isinstance(result.exception, PermissionError)
