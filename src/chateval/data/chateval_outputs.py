"""ChatEval's own 2023 outputs, read for ``chateval import`` (``format: chateval_2023``).

Its 2023 code (thunlp/ChatEval, ``llm_eval.py``) judged FairEval's items one by one, in the
data's order, and wrote ``pair_comparison_results.json``: a JSON list with one record per item,
``{"question", "response": {"gpt35": ..., "vicuna": ...}, "evaluation": [{"role", "evaluation"}]}``,
each evaluation the last reply of one referee (the panel's roles, in speaking order). Run with
``--reverse_input`` it showed vicuna's answer as Assistant 1 and wrote the same layout (the
responses still under their own keys) to ``calc_score_comparison_reverse``. Its scoring script
joined these records to the human labels by position, as this does to the data's items, with a
check the 2023 code did not make: each record's question and answers must be its item's. Every
bad record is a DataError naming the file, the record and the field.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chateval.core.choices import DATA_FORMATS
from chateval.core.items import PairwiseItem
from chateval.data.jsonl import read_json_list
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.chateval_imports import ChatEval2023ImportConfig


@dataclass(frozen=True)
class Reply:
    """A referee's last reply in one answer order: its role's name and its text."""

    role: str
    text: str


@dataclass(frozen=True)
class JudgedItem:
    """One item and its referees' replies in each answer order (``swapped``: B's answer shown
    as Assistant 1)."""

    item: PairwiseItem
    orders: tuple[tuple[bool, tuple[Reply, ...]], ...]


@dataclass(frozen=True)
class Outputs:
    """The items the outputs judged, in the data's order, and the panel's roles."""

    judged: list[JudgedItem]
    roles: tuple[str, ...]
    labelled: int  # the data's items with a human label (the outputs may judge the first ones only)


def _text(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise DataError(f"{where}: field {key!r} must be a string, got {found}")
    return value


def _replies(record: Any, where: str) -> tuple[Reply, ...]:
    """A record's replies; a DataError for a record not in the 2023 layout."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected an object with 'question', 'response' and 'evaluation'")
    evaluation = record.get("evaluation")
    if not isinstance(evaluation, list) or not evaluation:
        raise DataError(f"{where}: field 'evaluation' must be a non-empty list of {{role, evaluation}}")
    replies = []
    for index, entry in enumerate(evaluation):
        if not isinstance(entry, dict):
            raise DataError(f"{where}: field 'evaluation.{index}' must be an object {{role, evaluation}}")
        replies.append(
            Reply(
                _text(entry, "role", f"{where}, evaluation.{index}"),
                _text(entry, "evaluation", f"{where}, evaluation.{index}"),
            )
        )
    roles = [reply.role for reply in replies]
    if len(set(roles)) < len(roles):
        raise DataError(f"{where}: field 'evaluation' names a role twice ({', '.join(roles)})")
    return tuple(replies)


def _check_item(
    record: dict[str, Any], item: PairwiseItem, config: "ChatEval2023ImportConfig", where: str
) -> None:
    """A DataError naming the field when the record's question or answers are not its item's."""
    if _text(record, "question", where) != item.question:
        raise DataError(
            f"{where}: field 'question' is not item {item.id!r}'s question in the data {config.data.source} "
            "(the outputs judge the data's items in its order)"
        )
    response = record.get("response")
    if not isinstance(response, dict):
        raise DataError(f"{where}: field 'response' must map each system to its answer")
    for key, answer, side in (
        (config.outputs.first, item.answer_a, "A"),
        (config.outputs.second, item.answer_b, "B"),
    ):
        if key not in response:
            raise DataError(
                f"{where}: field 'response' has no key {key!r} (keys: {', '.join(map(str, response))}; "
                "set outputs.first and outputs.second)"
            )
        if response[key] != answer:
            raise DataError(
                f"{where}: field 'response.{key}' is not item {item.id!r}'s answer {side} in the data "
                f"{config.data.source}"
            )


def _items(config: "ChatEval2023ImportConfig") -> list[PairwiseItem]:
    items = DATA_FORMATS.get(config.data.format)(config.data)
    pairwise = [item for item in items if isinstance(item, PairwiseItem)]
    if len(pairwise) < len(items):
        raise DataError(f"{config.data.source}: format {config.data.format!r} gives no pairwise items")
    return pairwise


def _file(path: Path, items: Sequence[PairwiseItem]) -> list[Any]:
    records = read_json_list(path)
    if len(records) > len(items):
        raise DataError(f"{path}: {len(records)} records for the data's {len(items)} items")
    if not records:
        raise DataError(f"{path}: no records")
    return records


def read_outputs(config: "ChatEval2023ImportConfig") -> Outputs:
    """The outputs of both answer orders joined to the data's items by position (module doc);
    the roles must be the same, in the same order, in every record of both files."""
    items = _items(config)
    files = [(False, config.outputs.path)]
    files += [(True, config.outputs.swapped_path)] if config.outputs.swapped_path is not None else []
    read = [(swapped, path, _file(path, items)) for swapped, path in files]
    counts = {len(records) for _, _, records in read}
    if len(counts) > 1:
        sizes = ", ".join(f"{path}: {len(records)}" for _, path, records in read)
        raise DataError(f"the two answer orders' outputs judged different numbers of items ({sizes})")
    roles: tuple[str, ...] | None = None
    first_where = ""
    judged: list[JudgedItem] = []
    for index, item in enumerate(items[: counts.pop()]):
        orders = []
        for swapped, path, records in read:
            where = f"{path}: record {index}"
            replies = _replies(records[index], where)
            _check_item(records[index], item, config, where)
            found = tuple(reply.role for reply in replies)
            if roles is None:
                roles, first_where = found, where
            elif found != roles:
                raise DataError(
                    f"{where}: field 'evaluation' has the roles {', '.join(found)}; {first_where} has "
                    f"{', '.join(roles)} (one panel judged every item, in both orders)"
                )
            orders.append((swapped, replies))
        judged.append(JudgedItem(item, tuple(orders)))
    return Outputs(judged, roles or (), sum(1 for item in items if item.label is not None))
