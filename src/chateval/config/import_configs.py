"""Which import config a file is: pairwise verdicts through a mapping (chateval.config.imports,
the default), direct scores (``task: direct``, chateval.config.direct_imports) or ChatEval's own
2023 outputs (``format: chateval_2023``, chateval.config.chateval_imports), read and validated
as that one."""

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chateval.config.chateval_imports import ChatEval2023ImportConfig
from chateval.config.direct_imports import DirectImportConfig
from chateval.config.files import format_validation_error, read_tree, with_absolute_paths
from chateval.config.imports import ImportConfig, load_import_config
from chateval.errors import ConfigError

AnyImportConfig = ImportConfig | DirectImportConfig | ChatEval2023ImportConfig
IMPORT_FORMATS = ("chateval_2023",)  # the values of `format`; without it, a verdicts mapping

# Each kind's files besides the data's, by section and key.
_FILES: dict[type[DirectImportConfig | ChatEval2023ImportConfig], tuple[tuple[str, str], ...]] = {
    DirectImportConfig: (("scores", "path"),),
    ChatEval2023ImportConfig: (("outputs", "path"), ("outputs", "swapped_path")),
}


def _absolute(tree: dict[str, Any], base_dir: Path, files: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """``tree`` with its file paths (``files``, the data's) made absolute against ``base_dir``."""
    tree = with_absolute_paths(tree, base_dir)
    for section, key in files:
        holder = tree.get(section)
        path = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and isinstance(path, str) and not Path(path).is_absolute():
            holder[key] = str((base_dir / Path(path).expanduser()).resolve())
    return tree


def load_any_import_config(path: Path | str) -> AnyImportConfig:
    """Read and validate an import config of any kind (module doc; ``extends`` allowed); a
    ConfigError names the file and key."""
    path = Path(path)
    tree = read_tree(path)
    kind: type[DirectImportConfig | ChatEval2023ImportConfig]
    if "format" in tree:
        if tree["format"] not in IMPORT_FORMATS:
            raise ConfigError(
                f"{path}: invalid config: format: {tree['format']!r} is not an import format "
                f"({', '.join(IMPORT_FORMATS)}; leave it out for verdicts read through a mapping)"
            )
        kind = ChatEval2023ImportConfig
    elif tree.get("task") == "direct":
        kind = DirectImportConfig
    else:
        return load_import_config(path)
    try:
        return kind.model_validate(_absolute(tree, path.parent, _FILES[kind]))
    except ValidationError as exc:
        raise ConfigError(format_validation_error(str(path), exc, kind)) from None
