"""A run folder under one hand (chateval.record.lock): a second writer is refused at once,
naming the holder; a lock left by a dead process is taken over with a notice; another host's
lock is not; the lock file goes when its writer ends, however it ends."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from chateval.errors import ConfigError
from chateval.record.files import RunFolder
from chateval.record.lock import RunFolderBusy
from tests.support.helpers import ROOT
from tests.support.lock_holder import dead_pid, held_elsewhere


def holder_file(folder: Path, pid: int, host: str) -> RunFolder:
    """A lock file naming ``pid`` on ``host``, held by no process (as a killed writer leaves it)."""
    files = RunFolder(folder)
    files.create()
    record = {"pid": pid, "host": host, "since": "2025-01-02T03:04:05+00:00", "command": "chateval run"}
    files.lock.write_text(json.dumps(record))
    return files


def test_the_lock_names_its_holder_and_goes_at_the_end(tmp_path: Path) -> None:
    files = RunFolder(tmp_path / "run")
    with files.writing("chateval rescore"):
        held = json.loads(files.lock.read_text())
        assert held["pid"] == os.getpid() and held["host"] == socket.gethostname()
        assert held["command"] == "chateval rescore" and held["since"][:2] == "20"
        with files.writing("chateval run"):  # this process again (a sweep's run): the outer's
            pass
        assert files.lock.is_file()
    assert not files.lock.exists()


@pytest.mark.parametrize("stop", [RuntimeError("a bug"), KeyboardInterrupt()])
def test_the_lock_goes_when_its_writer_fails_or_is_stopped(tmp_path: Path, stop: BaseException) -> None:
    files = RunFolder(tmp_path)
    with pytest.raises(type(stop)), files.writing("chateval run"):
        raise stop
    assert not files.lock.exists()
    with files.writing("chateval run"):  # and the next writer takes it without a word
        pass


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    files = RunFolder(tmp_path)
    with held_elsewhere(tmp_path) as holder:
        with pytest.raises(RunFolderBusy) as refused, files.writing("chateval rescore"):
            pytest.fail("two writers at once")
        message = str(refused.value)
        assert f"{tmp_path} is being written by `chateval run`, pid {holder.pid} on host " in message
        assert socket.gethostname() in message and ", since 20" in message and "\n" not in message
        assert json.loads(files.lock.read_text())["pid"] == holder.pid  # the holder's lock is intact
    assert not files.lock.exists()  # removed by its holder at its end


def test_a_lock_left_by_a_dead_process_is_taken_over_with_a_notice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gone = dead_pid()
    files = holder_file(tmp_path, gone, socket.gethostname())
    with files.writing("chateval run"):
        assert json.loads(files.lock.read_text())["pid"] == os.getpid()
    (notice,) = [r.getMessage() for r in caplog.records if r.name == "chateval.record.lock"]
    assert notice == (
        f"{tmp_path}: taking over the lock left by `chateval run`, pid {gone} on host "
        f"{socket.gethostname()}, since 2025-01-02T03:04:05+00:00, which ended without removing it"
    )
    assert not files.lock.exists()


def test_another_hosts_lock_is_not_taken_over(tmp_path: Path) -> None:
    files = holder_file(tmp_path, 4242, "gpu-node-7")
    with pytest.raises(RunFolderBusy) as refused, files.writing("chateval run"):
        pytest.fail("another host's lock taken over")
    assert str(refused.value) == (
        f"{tmp_path} is locked by `chateval run`, pid 4242 on host gpu-node-7, since "
        "2025-01-02T03:04:05+00:00, another host: this one cannot tell whether it still runs; "
        f"once it has ended, delete {files.lock} and run this again"
    )
    assert json.loads(files.lock.read_text())["host"] == "gpu-node-7"  # left for its owner
    files.lock.unlink()  # the way out the message gives
    with files.writing("chateval run"):
        pass


_FORK_THEN_DIE = """
import os, sys
from pathlib import Path
from chateval.record.files import RunFolder

held = RunFolder(Path(sys.argv[1])).writing("chateval run")
held.__enter__()
if os.fork() == 0:  # an engine's forked worker: it lives on until the test lets it go
    sys.stdin.readline()
    os._exit(0)
os._exit(0)  # the writer dies without a word, as under kill -9
"""


def test_a_forked_child_does_not_keep_its_dead_parents_lock(tmp_path: Path) -> None:
    """An engine's worker that outlives its killed writer must not keep the folder locked."""
    files = RunFolder(tmp_path)
    writer = subprocess.Popen(
        [sys.executable, "-c", _FORK_THEN_DIE, str(tmp_path)], stdin=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert writer.stdin is not None
    try:
        assert writer.wait(timeout=60) == 0 and files.lock.is_file()
        with files.writing("chateval run"):  # taken over, though the worker still runs
            pass
    finally:
        writer.stdin.write("\n")  # the worker reads the same pipe
        writer.stdin.close()


def test_a_path_that_is_a_file_or_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    with (
        pytest.raises(ConfigError, match="out: output path exists and is not a folder"),
        RunFolder(tmp_path / "out").writing("chateval run"),
    ):
        pytest.fail("a file taken for a folder")
    if os.geteuid() == 0:
        return  # root writes anywhere
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with (
        pytest.raises(ConfigError, match=r"locked: cannot write the run folder \(Permission denied\)"),
        RunFolder(locked).writing("chateval run"),
    ):
        pytest.fail("a folder without write permission written")
