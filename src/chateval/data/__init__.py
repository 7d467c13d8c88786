"""Data loaders: each turns local files into Item records. No network access."""

from typing import TYPE_CHECKING

# Importing the loader modules registers their formats.
from chateval.data import faireval as _faireval  # noqa: F401
from chateval.data import jsonl as _jsonl  # noqa: F401
from chateval.data import table as _table  # noqa: F401
from chateval.data import topical_chat as _topical_chat  # noqa: F401
from chateval.data.items import DirectItem, Item, PairwiseItem
from chateval.data.loaders import LOADERS

if TYPE_CHECKING:
    from chateval.config import DataConfig


def load_items(data: "DataConfig") -> list[Item]:
    """Load the items ``data`` describes with the loader registered for its format."""
    return LOADERS.get(data.format)(data)


__all__ = ["LOADERS", "DirectItem", "Item", "PairwiseItem", "load_items"]
