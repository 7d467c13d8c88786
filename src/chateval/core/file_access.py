"""Who may read what chateval writes: run folders and reports hold items, answers and debates,
so by default only their owner (folders 0700, files 0600). ``CHATEVAL_FILE_ACCESS=group``
shares them with the owner's group, read-only (0750, 0640)."""

import os
from pathlib import Path

from chateval.errors import ConfigError, OutputError

ACCESS_SETTING = "CHATEVAL_FILE_ACCESS"
_MODES = {"owner": (0o700, 0o600), "group": (0o750, 0o640)}


def access() -> str:
    """``owner`` (the default) or ``group``, from ``CHATEVAL_FILE_ACCESS``."""
    value = os.environ.get(ACCESS_SETTING, "owner").strip().lower() or "owner"
    if value not in _MODES:
        raise ConfigError(f"{ACCESS_SETTING}={value!r}: use one of {', '.join(_MODES)}")
    return value


def folder_mode() -> int:
    """The permission bits of a folder chateval writes a run or report into."""
    return _MODES[access()][0]


def file_mode() -> int:
    """The permission bits of a file chateval writes."""
    return _MODES[access()][1]


def describe() -> str:
    """``folders 0700, files 0600, owner only (...)``, or the group's modes."""
    if access() == "owner":
        return f"folders 0700, files 0600, owner only ({ACCESS_SETTING}=group to share)"
    return f"folders 0750, files 0640, the group reads ({ACCESS_SETTING}=group)"


def private_folder(path: Path) -> Path:
    """Create ``path`` (and its parents) with ``folder_mode()``. A folder that is there already
    keeps its mode: it may be the user's own (``report -o .``); the files chateval writes into
    it are private anyway. OutputError names the folder that could not be made, and why."""
    if path.is_dir():
        return path
    try:
        # exist_ok: another process may make it meanwhile (two runs sharing a judgment store);
        # a file of that name is still refused (FileExistsError).
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(folder_mode())  # mkdir's mode would pass through the umask
    except FileExistsError as exc:
        where = exc.filename or path
        raise OutputError(f"cannot create the folder {where}: a file of that name is there") from None
    except OSError as exc:  # a read-only place, no permission: the first folder that failed
        raise OutputError(f"cannot create the folder {exc.filename or path}: {exc.strerror or exc}") from None
    return path


def restrict_new_files() -> None:
    """Make every file and folder this process creates from now on at most ``folder_mode()``:
    what dependencies write (a local Ray instance's session folder, caches) included."""
    os.umask(0o777 & ~folder_mode())


def open_private(path: Path, flags: int) -> int:
    """``os.open`` of a file chateval writes, created with ``file_mode()`` whatever the umask;
    an existing file keeps its bits unless it is created anew."""
    fd = os.open(path, flags, file_mode())
    if flags & os.O_CREAT:
        os.fchmod(fd, file_mode())
    return fd
