"""Responses data: one row per (prompt, system, response), and the items chateval builds from it.

``jsonl_responses``: ``{"prompt", "question", "system", "response", "scores"?}`` per line
(``prompt`` a string or integer id; rows of one prompt repeat its question). ``table_responses``:
a .jsonl, .json (list) or .csv file mapped by ``fields`` (prompt, question, system, response)
and ``scores``. ``faireval_systems`` lives in data/faireval.py.

Pairwise: per prompt, the comparisons of ``data.compare`` (data/designs.py), each a
PairwiseItem ``"{prompt}:{A}-vs-{B}"`` naming its systems and prompt. Direct: one DirectItem
``"{prompt}:{system}"`` per row, grouped by prompt. Every system must answer every prompt
(``missing_responses: skip_prompt`` leaves incomplete prompts out instead).
"""

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from chateval.core.items import DirectItem, Item, Label, PairwiseItem, Response, Responses
from chateval.data.designs import check_design, design_pairs
from chateval.data.jsonl import numeric_scores, optional_id, read_jsonl, text_field
from chateval.data.loaders import RESPONSE_LOADERS
from chateval.data.table import mapped_scores, table_records
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.data import DataConfig

log = logging.getLogger(__name__)

_FLIP: dict[Label, Label] = {"A": "B", "B": "A", "tie": "tie"}


def _row(record: dict[str, Any], where: str, keys: tuple[str, str, str, str]) -> tuple[str, str, str, str]:
    """(prompt, question, system, response) of a record, by the fields ``keys`` names."""
    prompt_key, question_key, system_key, response_key = keys
    prompt = optional_id(record, prompt_key, where)
    if prompt is None:
        raise DataError(f"{where}: missing field {prompt_key!r}")
    return (
        prompt,
        text_field(record, question_key, where),
        text_field(record, system_key, where),
        text_field(record, response_key, where),
    )


@RESPONSE_LOADERS.register("jsonl_responses")
def load_jsonl_responses(data: "DataConfig") -> Responses:
    """Responses rows from chateval JSONL."""
    rows = []
    for number, record in read_jsonl(data.path):
        where = f"{data.path}:{number}"
        prompt, question, system, response = _row(record, where, ("prompt", "question", "system", "response"))
        rows.append(Response(prompt, question, system, response, where, numeric_scores(record, where)))
    return Responses(str(data.path), rows)


@RESPONSE_LOADERS.register("table_responses")
def load_table_responses(data: "DataConfig") -> Responses:
    """Responses rows from a mapped table (fields prompt, question, system, response; scores)."""
    f = data.fields
    keys = (f.prompt or "prompt", f.question, f.system, f.response)
    rows = []
    for where, record in table_records(data):
        prompt, question, system, response = _row(record, where, keys)
        rows.append(Response(prompt, question, system, response, where, mapped_scores(record, data, where)))
    return Responses(str(data.path), rows)


@dataclass(frozen=True)
class _Table:
    """Rows by prompt (in first-appearance order), then by system."""

    prompts: dict[str, dict[str, Response]]
    systems: list[str]  # in first-appearance order


def _table(responses: Responses) -> _Table:
    prompts: dict[str, dict[str, Response]] = {}
    for row in responses.rows:
        by_system = prompts.setdefault(row.prompt, {})
        first = next(iter(by_system.values()), None)
        if row.system in by_system:
            raise DataError(
                f"{row.where}: duplicate response of system {row.system!r} to prompt {row.prompt!r} "
                f"(first at {by_system[row.system].where})"
            )
        if first is not None and first.question != row.question:
            raise DataError(
                f"{row.where}: field 'question' of prompt {row.prompt!r} differs from the one "
                f"at {first.where}"
            )
        by_system[row.system] = row
    systems = list(dict.fromkeys(row.system for row in responses.rows))
    return _Table(prompts, systems)


def _systems(table: _Table, data: "DataConfig", source: str) -> list[str]:
    if data.systems is None:
        return table.systems
    unknown = [s for s in data.systems if s not in table.systems]
    if unknown:
        raise DataError(
            f"{source}: data.systems: {', '.join(map(repr, unknown))} not in the data; "
            f"systems: {', '.join(table.systems)}"
        )
    return list(data.systems)


def _complete_prompts(table: _Table, systems: Sequence[str], data: "DataConfig", source: str) -> list[str]:
    """The prompts every system answered; an incomplete one is an error unless skipped."""
    kept, skipped = [], []
    for prompt, by_system in table.prompts.items():
        missing = [s for s in systems if s not in by_system]
        if not missing:
            kept.append(prompt)
        elif data.missing_responses == "skip_prompt":
            skipped.append(prompt)
        else:
            raise DataError(
                f"{source}: prompt {prompt!r} has no response of system {missing[0]!r}"
                f"{f' (nor of {len(missing) - 1} more)' if len(missing) > 1 else ''}; every system must "
                "answer every prompt (data.missing_responses: skip_prompt leaves such prompts out)"
            )
    if skipped:
        log.warning(
            "%s: left out %d prompt%s lacking a system's response (first: %r)",
            source,
            len(skipped),
            "" if len(skipped) == 1 else "s",
            skipped[0],
        )
    if not kept:
        raise DataError(f"{source}: no prompt has a response of every system ({', '.join(systems)})")
    return kept


def _slug(name: str) -> str:
    """A name as it appears in an item id: whitespace runs become underscores."""
    return re.sub(r"\s+", "_", name.strip())


def comparison_id(prompt: str, system_a: str, system_b: str) -> str:
    """The id of one comparison: ``"{prompt}:{A}-vs-{B}"``."""
    return f"{_slug(prompt)}:{_slug(system_a)}-vs-{_slug(system_b)}"


def _label(responses: Responses, prompt: str, a: str, b: str) -> Label | None:
    label = responses.labels.get((prompt, a, b))
    if label is not None:
        return label
    flipped = responses.labels.get((prompt, b, a))
    return _FLIP[flipped] if flipped is not None else None


def build_items(responses: Responses, data: "DataConfig", task: Literal["pairwise", "direct"]) -> list[Item]:
    """The items of responses data: comparisons (pairwise) or one item per response (direct).

    ``data.limit`` counts prompts. Errors (a bad design, a missing or duplicate response, fewer
    than two systems) come here, before any model loads.
    """
    source = responses.source
    if not responses.rows:
        raise DataError(f"{source}: no records")
    table = _table(responses)
    systems = _systems(table, data, source)
    if task == "pairwise" and len(systems) < 2:
        raise DataError(
            f"{source}: comparisons need at least two systems; found {len(systems)}: {', '.join(systems)}"
        )
    design = data.design()
    check_design(design, systems, source)
    prompts = _complete_prompts(table, systems, data, source)
    if data.limit is not None:
        prompts = prompts[: data.limit]
    items: list[Item] = []
    seen: dict[str, tuple[str, str, str]] = {}
    for prompt in prompts:
        rows = table.prompts[prompt]
        if task == "direct":
            for system in systems:
                row = rows[system]
                item_id = f"{_slug(prompt)}:{_slug(system)}"
                _unique(item_id, (prompt, system, ""), seen, source)
                items.append(
                    DirectItem(
                        item_id, row.question, row.response, "", row.scores, group=prompt, system=system
                    )
                )
            continue
        for a, b in design_pairs(design, systems, data.seed, prompt):
            item_id = comparison_id(prompt, a, b)
            _unique(item_id, (prompt, a, b), seen, source)
            items.append(
                PairwiseItem(
                    item_id,
                    rows[a].question,
                    rows[a].response,
                    rows[b].response,
                    _label(responses, prompt, a, b),
                    system_a=a,
                    system_b=b,
                    prompt=prompt,
                )
            )
    return items


def _unique(
    item_id: str, what: tuple[str, str, str], seen: dict[str, tuple[str, str, str]], source: str
) -> None:
    """Two comparisons whose names run together (spaces, "-vs-" in a name) get one id: refuse."""
    if item_id in seen:
        raise DataError(
            f"{source}: item id {item_id!r} stands for both {seen[item_id]} and {what}; "
            "rename a prompt or system"
        )
    seen[item_id] = what
