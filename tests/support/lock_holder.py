"""Another process writing a run folder: it holds the folder's writer lock (as a `chateval run`
would) until the test lets it go, so that a test's own writer is the second one."""

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.helpers import ROOT

_HOLD = """
import sys
from pathlib import Path
from chateval.record.files import RunFolder

with RunFolder(Path(sys.argv[1])).writing(sys.argv[2]):
    print("held", flush=True)
    sys.stdin.readline()  # until the test lets go
print("released", flush=True)
"""


@contextmanager
def held_elsewhere(folder: Path, command: str = "chateval run") -> Iterator[subprocess.Popen[str]]:
    """``folder``'s writer lock held by another process as ``command`` while the block runs;
    released (and the process ended, exit 0) when it ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(folder), command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        if holder.poll() is None:
            holder.stdin.write("\n")
            holder.stdin.flush()
        holder.wait(timeout=60)
    assert holder.stdout.read() == "released\n" and holder.returncode == 0


def dead_pid() -> int:
    """The pid of a process that has ended (its lock, had it one, released by the kernel)."""
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid
