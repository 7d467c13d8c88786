"""items.jsonl: the items a run debated, as its referees saw them, so that a report, a rescore
or an export never goes back to the data file (which may have changed, or be gone)."""

import dataclasses
from collections.abc import Sequence

from chateval.core.items import DirectItem, Item, PairwiseItem
from chateval.core.schema.records import ItemRecord


def item_record(item: Item) -> ItemRecord:
    """``item`` as one line of items.jsonl."""
    fields = dataclasses.asdict(item)
    if fields.get("category") is None:  # items.jsonl of data without categories stays as it was
        fields.pop("category", None)
    kind = "pairwise" if isinstance(item, PairwiseItem) else "direct"
    record: ItemRecord = {"kind": kind, **fields}  # type: ignore[typeddict-item]
    return record


def item_of_record(record: ItemRecord) -> Item:
    """The item one line of items.jsonl holds (validated: its keys are the item's fields)."""
    fields = {key: value for key, value in record.items() if key != "kind"}
    if record["kind"] == "pairwise":
        return PairwiseItem(**fields)  # type: ignore[arg-type]
    return DirectItem(**fields)  # type: ignore[arg-type]


def records_of_items(items: Sequence[Item]) -> list[ItemRecord]:
    """items.jsonl's lines, in item order."""
    return [item_record(item) for item in items]
