"""A run's output folder, created or reopened: a finished run is never overwritten without
``--force``, and an unfinished one resumes only under the same resolved config."""

from pathlib import Path
from typing import Any

import yaml

from chateval.config.files import dump_config
from chateval.errors import ConfigError, DataError
from chateval.record.files import RunFolder
from chateval.run.finished import config_as_today

# How a run is executed, not what it computes: a run may resume under other values (say, with
# step barriers after a streaming run hung, or phased after running out of memory, or with
# another judgment store: a stored debate is the one the run would judge).
RESUMABLE_KEYS = ("scheduling", "placement", "cache")


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): tree}


def changed_keys(old: Any, new: Any) -> list[str]:
    """Dotted keys whose values differ between two config mappings (execution keys aside)."""
    a, b = _flatten(old), _flatten(new)
    return sorted(
        k for k in a.keys() | b.keys() if a.get(k) != b.get(k) and k.split(".")[0] not in RESUMABLE_KEYS
    )


def _stored_as_today(files: RunFolder) -> Any:
    """The folder's config.yaml read through today's RunConfig: keys added by a later release
    carry their defaults, so an unfinished run of an earlier release still resumes. A config
    today's schema refuses is compared as it was written."""
    tree = files.read_config_tree()
    try:
        return yaml.safe_load(dump_config(config_as_today(tree, files.config, files.path)))
    except DataError:
        return tree


def prepare_outdir(
    outdir: Path, force: bool, config_text: str, finished_hint: str = "pass --force to overwrite it"
) -> bool:
    """Create or reopen ``outdir``; return True when an unfinished run there is resumed.

    A finished run is never overwritten without ``force`` (the refusal ends with
    ``finished_hint``); an unfinished one is resumed only
    with the same resolved config (the error names the keys that changed). ``force`` removes
    the run files chateval writes, and nothing else.
    """
    if outdir.exists() and not outdir.is_dir():
        raise ConfigError(f"{outdir}: output path exists and is not a folder")
    files = RunFolder(outdir)
    if force:
        files.remove_run_files()
    elif files.finished():
        raise ConfigError(f"{outdir} already holds a finished run; {finished_hint}")
    if files.config.is_file():
        changed = changed_keys(_stored_as_today(files), yaml.safe_load(config_text))
        if changed:
            raise ConfigError(
                f"{outdir} holds an unfinished run with a different config (changed: {', '.join(changed)}); "
                "rerun with the same config to resume, or pass --force to start over"
            )
        return True
    files.create()
    files.write_config(config_text)
    return False
