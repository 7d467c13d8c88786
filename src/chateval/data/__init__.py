"""Data loaders: each turns local files into Item records. No network access.

The formats' registries are chateval.core.choices' (each loader module is imported when its
format is first used; a plugin's format comes from its entry point)."""

from typing import TYPE_CHECKING, Literal

from chateval.core.choices import DATA_FORMATS, RESPONSES_FORMATS
from chateval.core.items import DirectItem, Item, PairwiseItem
from chateval.data import responses as _responses
from chateval.data.labels import is_labelled, keep_labels
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.data import DataConfig


def load_items(data: "DataConfig", task: Literal["pairwise", "direct"] = "pairwise") -> list[Item]:
    """Load the items ``data`` describes with the loader registered for its format (a data
    format's, or a responses format's).

    Responses formats build the items of ``task`` (comparisons, or one item per response).
    ``data.limit`` keeps the first N items (responses formats: the first N prompts), then
    ``data.label_fraction`` keeps the human labels of a seeded share of the labelled ones.
    """
    if data.format in RESPONSES_FORMATS:
        responses = RESPONSES_FORMATS.get(data.format)(data)
        items = _responses.build_items(responses, data, task)
    else:  # the config accepts only the registries' names
        items = DATA_FORMATS.get(data.format)(data)
        items = items[: data.limit] if data.limit else items
    if data.label_fraction < 1.0 and not any(is_labelled(item) for item in items):
        hint = (
            " (pairwise labels on responses data come from data.labels_file)"
            if data.format in RESPONSES_FORMATS
            else ""
        )
        raise DataError(
            f"{data.source}: data.label_fraction is {data.label_fraction:g}, but no item carries a human "
            f"label to keep{hint}"
        )
    return keep_labels(items, data.label_fraction, data.seed)


__all__ = ["DirectItem", "Item", "PairwiseItem", "load_items"]
