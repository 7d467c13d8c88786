"""Where the judgment store lives unless a run or ``chateval cache`` says otherwise."""

import os
from pathlib import Path

CACHE_SETTING = "CHATEVAL_CACHE"
# Values of CHATEVAL_CACHE that turn the store off (any case).
OFF_VALUES = frozenset({"off", "0", "false", "no"})


def default_store_folder() -> Path | None:
    """Where the judgment store lives unless a run says otherwise: ``$CHATEVAL_CACHE`` when set
    (the values "off", "0", "false", "no", any case, turn it off: None), else
    ``$XDG_CACHE_HOME/chateval``, else ``~/.cache/chateval``."""
    setting = os.environ.get(CACHE_SETTING, "").strip()
    if setting:
        return None if setting.lower() in OFF_VALUES else Path(setting).expanduser()
    # The XDG base directory spec: a relative value is invalid and is ignored.
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "chateval"
