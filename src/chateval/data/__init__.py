"""Data loaders: each turns local files into Item records. No network access."""

from typing import TYPE_CHECKING, Literal

from chateval.core.items import DirectItem, Item, PairwiseItem

# Importing the loader modules registers their formats.
from chateval.data import faireval as _faireval  # noqa: F401
from chateval.data import jsonl as _jsonl  # noqa: F401
from chateval.data import judgments as _judgments  # noqa: F401
from chateval.data import responses as _responses
from chateval.data import table as _table  # noqa: F401
from chateval.data import topical_chat as _topical_chat  # noqa: F401
from chateval.data.labels import is_labelled, keep_labels
from chateval.data.loaders import LOADERS, RESPONSE_LOADERS
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.data import DataConfig


def load_items(data: "DataConfig", task: Literal["pairwise", "direct"] = "pairwise") -> list[Item]:
    """Load the items ``data`` describes with the loader registered for its format.

    Responses formats build the items of ``task`` (comparisons, or one item per response).
    ``data.limit`` keeps the first N items (responses formats: the first N prompts), then
    ``data.label_fraction`` keeps the human labels of a seeded share of the labelled ones.
    """
    if data.format in RESPONSE_LOADERS:
        responses = RESPONSE_LOADERS.get(data.format)(data)
        items = _responses.build_items(responses, data, task)
    else:  # the config knows every format (config.data.FORMAT_NAMES: the loaders' names)
        items = LOADERS.get(data.format)(data)
        items = items[: data.limit] if data.limit else items
    if data.label_fraction < 1.0 and not any(is_labelled(item) for item in items):
        hint = (
            " (pairwise labels on responses data come from data.labels_file)"
            if data.format in RESPONSE_LOADERS
            else ""
        )
        raise DataError(
            f"{data.source}: data.label_fraction is {data.label_fraction:g}, but no item carries a human "
            f"label to keep{hint}"
        )
    return keep_labels(items, data.label_fraction, data.seed)


__all__ = ["LOADERS", "RESPONSE_LOADERS", "DirectItem", "Item", "PairwiseItem", "load_items"]
