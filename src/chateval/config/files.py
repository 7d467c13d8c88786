"""Config files: YAML with ``extends:`` chains, ``--set key=value`` overrides (dotted keys, list
indices allowed; values parsed as YAML), validation errors that name the file and key, and the
resolved config written back as YAML. Paths in a config file are relative to the file's folder.
"""

import copy
import logging
import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from chateval.config.run import RunConfig
from chateval.config.unknown_keys import unknown_key
from chateval.core.textfile import read_utf8
from chateval.errors import ConfigError

log = logging.getLogger(__name__)


def _set_path(tree: dict[str, Any], dotted: str, value: Any, raw: str) -> None:
    """Set ``dotted`` (keys, list indices) in ``tree`` to ``value`` (``raw``: as written)."""
    node: Any = tree
    keys = dotted.split(".")
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise ConfigError(f"--set {dotted}: {key!r} is not an index of a list of {len(node)}")
            if last:
                node[int(key)] = value
            else:
                node = node[int(key)]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
        else:
            raise ConfigError(_not_a_mapping(keys, i, node, raw))


def _not_a_mapping(keys: list[str], at: int, node: Any, raw: str) -> str:
    """Why ``--set`` cannot go below ``keys[:at]`` (it holds a value, not a mapping), and the
    form that sets it: the whole value as a YAML mapping (``data.compare: all_pairs`` takes
    ``--set 'data.compare={against: X}'``)."""
    above = ".".join(keys[:at])
    mapping = raw.strip()
    for key in reversed(keys[at:]):
        mapping = f"{{{key}: {mapping}}}"
    return (
        f"--set {'.'.join(keys)}: {above} is {node!r}, not a mapping; to give it a mapping, set "
        f"it whole: --set '{above}={mapping}'"
    )


def apply_overrides(tree: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key=value`` overrides (value parsed as YAML) to a raw config mapping."""
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {override!r}: expected key=value")
        _set_path(tree, key.strip(), yaml.safe_load(raw), raw)
    return tree


def format_validation_error(source: str, exc: ValidationError, root: type[BaseModel] = RunConfig) -> str:
    """A validation error of a config file (a ``root`` model) in one line naming the file and
    each key."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's message
        if err["type"] == "extra_forbidden":
            message = unknown_key(err["loc"], root)
        problems.append(f"{where}: {message}")
    return f"{source}: invalid config: " + "; ".join(problems)


def parse_config(tree: dict[str, Any], source: str, base_dir: Path) -> RunConfig:
    """Validate a raw mapping; relative paths are resolved against ``base_dir``."""
    try:
        config = RunConfig.model_validate(with_absolute_paths(tree, base_dir))
    except ValidationError as exc:
        raise ConfigError(format_validation_error(source, exc)) from None
    agents = [a.model_copy(update={"model": _model_path(a.model, base_dir)}) for a in config.agents]
    summarizer = config.summarizer
    if summarizer.model is not None:
        summarizer = summarizer.model_copy(update={"model": _model_path(summarizer.model, base_dir)})
    return config.model_copy(update={"agents": agents, "summarizer": summarizer})


def with_absolute_paths(tree: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """A copy of a raw config whose file paths (``models_dir``, a ``cache`` folder; the data, a
    mapping's files, the questions and labels files) are made absolute: ``~`` is the user's
    home, any other relative path is against ``base_dir``; the config itself and values of the
    wrong type (validation names them) are left alone."""
    tree = copy.deepcopy(tree)
    data = tree.get("data")
    places: list[tuple[dict[str, Any], str]] = [(tree, "models_dir"), (tree, "cache")]
    if isinstance(data, dict):
        path = data.get("path")
        places += [(path, system) for system in path] if isinstance(path, dict) else [(data, "path")]
        places += [
            (data[side], "path") for side in ("questions", "labels_file") if isinstance(data.get(side), dict)
        ]
    for holder, key in places:
        value = holder.get(key)
        if isinstance(value, (str, os.PathLike)):
            path = Path(value).expanduser()
            holder[key] = str(path if path.is_absolute() else (base_dir / path).resolve())
    return tree


def _model_path(model: str, base_dir: Path) -> str:
    """A model written as a relative path (./ or ../) or a home path (~), made absolute; other
    references (registry names, absolute paths, hub ids) unchanged."""
    if model.startswith(("./", "../")):
        return str((base_dir / model).resolve())
    if model.startswith("~"):
        return str(Path(model).expanduser())
    return model


# Mappings a derived config replaces whole: its own system -> file mapping is its data, not an
# addition to the base's systems.
_REPLACED_WHOLE = (("data", "path"),)


def _merge(base: dict[str, Any], child: dict[str, Any], at: tuple[str, ...] = ()) -> dict[str, Any]:
    """Deep-merge mappings; the child's values win, lists (and ``_REPLACED_WHOLE``) are replaced whole."""
    merged = dict(base)
    for key, value in child.items():
        where = (*at, key)
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and where not in _REPLACED_WHOLE:
            merged[key] = _merge(merged[key], value, where)
        else:
            merged[key] = value
    return merged


def _inherited_labels(path: Path, base_path: Path, base: dict[str, Any], child: dict[str, Any]) -> None:
    """Say in one line when a config that gives its own data keeps its base's labels file."""
    base_data, data = base.get("data"), child.get("data")
    if not (isinstance(base_data, dict) and isinstance(data, dict)):
        return
    if "path" in data and base_data.get("labels_file") and "labels_file" not in data:
        log.warning(
            "%s: data.labels_file comes from %s although data.path is this config's own; "
            "set data.labels_file: null to drop it",
            path,
            base_path,
        )


def _yaml_where(exc: yaml.YAMLError) -> str:
    """Where and what a YAML syntax error is, on one line."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{where}: {problem}"


def read_tree(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file as a mapping, with ``extends: other.yaml`` resolved (relative paths in
    the base stay relative to the base file's folder)."""
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    if path.resolve() in chain:
        raise ConfigError(f"{path}: 'extends' cycle through {' -> '.join(str(p) for p in chain)}")
    try:
        tree = yaml.safe_load(read_utf8(path, ConfigError))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML{_yaml_where(exc)}") from None
    if not isinstance(tree, dict):
        raise ConfigError(f"{path}: a config must be a YAML mapping")
    base_name = tree.pop("extends", None)
    if base_name is None:
        return tree
    if not isinstance(base_name, str):
        raise ConfigError(f"{path}: 'extends' must be a file name")
    base_path = path.parent / base_name
    base = read_tree(base_path, chain + (path.resolve(),))
    _inherited_labels(path, base_path, base, tree)
    # Paths in the base are relative to the base's folder: make them absolute before merging.
    return _merge(with_absolute_paths(base, base_path.parent), tree)


def load_config(path: Path | str, overrides: list[str] | None = None) -> RunConfig:
    """Read a YAML run config (safe_load only), resolve ``extends``, apply overrides
    (``key=value``, as ``--set`` takes them), validate."""
    path = Path(path)
    tree = read_tree(path)
    apply_overrides(tree, overrides or [])
    return parse_config(tree, str(path), path.parent)


def dump_config(config: RunConfig) -> str:
    """The fully resolved config as YAML (what ``config.yaml`` in a run folder holds)."""
    text: str = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    return text
