"""The comparisons ``chateval import`` writes: each judgment joined to the item it judged, so
that an imported run and a chateval run of the same data share their item ids (``chateval
compare`` pairs them item by item).

- **Responses data** (``table_responses``, ...): the item is built as a run of the data builds
  it, its systems named in the data's order (with ``compare: {against: X}``, X second); a
  judgment of the other order is the same comparison reversed.
- **Pairwise data** (``table_pairwise`` reading the same records, as JudgeBench's or
  AlpacaEval's hold the texts judged): the data's own item, joined by its id when the
  judgments name no systems (their prompt is the item's id), else by its prompt and systems
  in either order. Its label is the data's (the import's ``labels`` may replace it).
- **No data**: an item of ids only, ``"{prompt}:{A}-vs-{B}"``, or the prompt alone when the
  records name no systems.

Every judgment the data cannot show is a DataError naming the record and the field.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

from chateval.config.imports import ImportConfig
from chateval.core.choices import RESPONSES_FORMATS
from chateval.core.items import Item, PairwiseItem, Response
from chateval.data import load_items
from chateval.data.judgments import Judgment
from chateval.data.responses import comparison_id, comparison_item, responses_table
from chateval.errors import DataError
from chateval.schema.base import Label

log = logging.getLogger(__name__)

Table = dict[str, dict[str, Response]]  # each prompt's responses by system


@dataclass(frozen=True)
class Joined:
    """The judgments, each oriented as its item names its systems, with that item; and
    whether the items carry texts (data was given)."""

    judgments: list[Judgment]
    items: list[PairwiseItem]
    texts: bool


@dataclass(frozen=True)
class _Responses:
    """Responses data: each prompt's responses by system, and the systems in the order a run
    of the same data names them in its comparisons."""

    table: Table
    systems: list[str]
    against: str | None  # the design's baseline, named second


def join_items(config: ImportConfig, kept: list[Judgment]) -> Joined:
    """Each kept judgment with its item (module doc); unlabelled unless pairwise data labels it."""
    data = config.data
    if data is None:
        return Joined(kept, [_id_item(j) for j in kept], texts=False)
    if data.format in RESPONSES_FORMATS:
        responses = RESPONSES_FORMATS.get(data.format)(data)
        table, systems = responses_table(responses, data)
        found = _Responses(table, systems, data.design().against)
        for judgment in kept:
            _check_in_responses(judgment, found, config)
        oriented = [_oriented(judgment, found) for judgment in kept]
        return Joined(oriented, [_response_item(j, found.table) for j in oriented], texts=True)
    index = _pairwise_index(config)
    pairs = [_pairwise_item(judgment, config, index) for judgment in kept]
    left = len(index) - len(pairs)
    if left:
        log.warning("%s: %d item(s) of the data judged by no imported verdict: left out", data.source, left)
    return Joined([j for j, _ in pairs], [item for _, item in pairs], texts=True)


def _id_item(judgment: Judgment) -> PairwiseItem:
    """A comparison of ids only (no data): named by prompt and systems, or by the prompt."""
    a, b = judgment.system_a, judgment.system_b
    item_id = judgment.prompt if a is None or b is None else comparison_id(judgment.prompt, a, b)
    return PairwiseItem(item_id, "", "", "", None, a, b, judgment.prompt)


def _oriented(judgment: Judgment, data: _Responses) -> Judgment:
    """``judgment`` with its systems named as a run of the same data names them (the data's
    order; a baseline second)."""
    a, b = str(judgment.system_a), str(judgment.system_b)
    if data.against is not None:
        backwards = a == data.against
    else:
        backwards = data.systems.index(a) > data.systems.index(b)
    return judgment.reversed() if backwards else judgment


def _check_in_responses(judgment: Judgment, data: _Responses, config: ImportConfig) -> None:
    """A DataError naming the record and field when the data lacks its prompt or a system's
    response to it."""
    files, source, table = config.judgments, config.data.source if config.data else "", data.table
    if judgment.prompt not in table:
        raise DataError(
            f"{judgment.where}: field {files.prompt!r}: prompt {judgment.prompt!r} is not in the "
            f"data {source}"
        )
    for key, system in ((files.system_a, judgment.system_a), (files.system_b, judgment.system_b)):
        named = key if isinstance(key, str) else "system"
        if system not in data.systems:
            raise DataError(
                f"{judgment.where}: field {named!r}: system {system!r} is not in the data {source} "
                f"(systems: {', '.join(data.systems)})"
            )
        if system not in table[judgment.prompt]:
            raise DataError(
                f"{judgment.where}: field {named!r}: system {system!r} has no response to prompt "
                f"{judgment.prompt!r} in the data {source}"
            )


def _response_item(judgment: Judgment, table: Table) -> PairwiseItem:
    """The comparison ``judgment`` judged, A as it names A, texts from the responses."""
    a, b = str(judgment.system_a), str(judgment.system_b)
    rows = table[judgment.prompt]
    return comparison_item(comparison_id(judgment.prompt, a, b), rows[a], rows[b], None)


# Pairwise data ---------------------------------------------------------------------------------

_Key = tuple[str | None, str | None, str | None]  # (prompt, system A, system B); id: (id, None, None)


def _pairwise_index(config: ImportConfig) -> dict[_Key, PairwiseItem]:
    """The pairwise data's items by their id (the judgments name no systems) or by prompt and
    systems; a DataError when an item is not a comparison or lacks what the join needs."""
    data = config.data
    if data is None:
        return {}
    items: list[Item] = load_items(data, "pairwise")
    index: dict[_Key, PairwiseItem] = {}
    for item in items:
        if not isinstance(item, PairwiseItem):
            raise DataError(f"{data.source}: item {item.id!r} is not a comparison of two answers")
        if not config.judgments.names_systems:
            index[(item.id, None, None)] = item
        elif item.prompt is None or item.system_a is None or item.system_b is None:
            raise DataError(
                f"{data.source}: item {item.id!r} names no prompt and systems to join the judgments "
                "by (map data.fields.prompt, system_a and system_b)"
            )
        else:
            index[(item.prompt, item.system_a, item.system_b)] = item
    return index


def _pairwise_item(
    judgment: Judgment, config: ImportConfig, index: dict[_Key, PairwiseItem]
) -> tuple[Judgment, PairwiseItem]:
    """The data's item ``judgment`` judged, and the judgment oriented as the item names its
    systems (module doc)."""
    files, source = config.judgments, config.data.source if config.data else ""
    prompt, a, b = judgment.prompt, judgment.system_a, judgment.system_b
    if a is None or b is None:
        item = index.get((prompt, None, None))
        if item is None:
            raise DataError(
                f"{judgment.where}: field {files.prompt!r}: no item of the data {source} has the id "
                f"{prompt!r} (the judgments name no systems: their prompt is the item's id)"
            )
        return judgment, item
    if (prompt, a, b) in index:
        return judgment, index[(prompt, a, b)]
    if (prompt, b, a) in index:
        return judgment.reversed(), index[(prompt, b, a)]
    raise DataError(
        f"{judgment.where}: field {files.prompt!r}: no item of the data {source} compares {a!r} "
        f"and {b!r} on prompt {prompt!r}"
    )


def with_labels(items: list[PairwiseItem], labels: Mapping[str, Label]) -> list[PairwiseItem]:
    """``items`` with the labels ``labels`` gives by item id (an id it lacks: no label)."""
    return [replace(item, label=labels.get(item.id)) for item in items]
