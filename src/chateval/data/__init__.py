"""Data loaders: each turns a local file into Item records. No network access."""

from pathlib import Path

from chateval.data import jsonl as _jsonl  # noqa: F401  (registers its loaders)
from chateval.data.items import DirectItem, Item, PairwiseItem
from chateval.data.loaders import LOADERS


def load_items(format_name: str, path: Path) -> list[Item]:
    """Load items from ``path`` with the loader registered as ``format_name``."""
    return LOADERS.get(format_name)(path)


__all__ = ["LOADERS", "DirectItem", "Item", "PairwiseItem", "load_items"]
