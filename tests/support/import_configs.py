"""Import configs a test writes: a recipe of configs/import read as a tree to change, with the
files it names made absolute, and a tree written where a test imports it."""

from pathlib import Path
from typing import Any

import yaml


def recipe_tree(recipe: Path) -> dict[str, Any]:
    """The import recipe ``recipe`` as a tree whose files (each section's ``path`` and
    ``swapped_path``, the data's questions) name the same files from any other folder."""
    tree: dict[str, Any] = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    sections = [section for section in tree.values() if isinstance(section, dict)]
    sections += [s["questions"] for s in sections if isinstance(s.get("questions"), dict)]
    for section in sections:
        for key in ("path", "swapped_path"):
            if isinstance(section.get(key), str):
                section[key] = str(recipe.parent / section[key])
    return tree


def write_import_config(folder: Path, tree: dict[str, Any]) -> Path:
    """``tree`` written as the import config ``folder``/import.yaml; its path."""
    config = folder / "import.yaml"
    config.write_text(yaml.safe_dump(tree), encoding="utf-8")
    return config
