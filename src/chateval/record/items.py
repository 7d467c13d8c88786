"""items.jsonl: the items a run debated, as its referees saw them, so that a report, a rescore
or an export never goes back to the data file (which may have changed, or be gone)."""

import dataclasses
from collections.abc import Sequence
from typing import Any

from chateval.core.items import DirectItem, EarlierTurn, Item, PairwiseItem
from chateval.schema.items import ItemRecord


def item_record(item: Item) -> ItemRecord:
    """``item`` as one line of items.jsonl."""
    fields = dataclasses.asdict(item)
    # What one-turn items without categories lack stays out: their items.jsonl is as it was.
    for key in ("category", "earlier", "earlier_left_out"):
        if key in fields and not fields[key]:  # None, (), 0
            del fields[key]
    kind = "pairwise" if isinstance(item, PairwiseItem) else "direct"
    record: ItemRecord = {"kind": kind, **fields}  # type: ignore[typeddict-item]
    return record


def item_of_record(record: ItemRecord) -> Item:
    """The item one line of items.jsonl holds (validated: its keys are the item's fields)."""
    fields: dict[str, Any] = {key: value for key, value in record.items() if key != "kind"}
    if record["kind"] == "pairwise":
        fields["earlier"] = tuple(EarlierTurn(**turn) for turn in fields.get("earlier", ()))
        return PairwiseItem(**fields)
    return DirectItem(**fields)


def records_of_items(items: Sequence[Item]) -> list[ItemRecord]:
    """items.jsonl's lines, in item order."""
    return [item_record(item) for item in items]
