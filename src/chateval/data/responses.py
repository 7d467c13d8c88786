"""Responses data: one row per (prompt, system, response), and the items chateval builds from it.

``jsonl_responses``: ``{"prompt", "question", "system", "response", "scores"?}`` per line
(``prompt`` a string or integer id; rows of one prompt repeat its question). ``table_responses``:
.jsonl, .json (list), .csv or .parquet files (or a saved dataset) mapped by ``fields`` (prompt,
question, system, response; dotted paths reach into nested records) and ``scores``. Both read
one file or several (a folder, a glob, a mapping system -> file; data/files.py), the system
named by a field, the file or its folder; ``data.questions`` supplies questions by prompt id
and ``data.labels_file`` human pairwise labels (data/side_files.py). ``faireval_systems``
lives in data/faireval.py.

Pairwise: per prompt, the comparisons of ``data.compare`` (data/designs.py), each a
PairwiseItem ``"{prompt}:{A}-vs-{B}"`` naming its systems and prompt. Direct: one DirectItem
``"{prompt}:{system}"`` per row, grouped by prompt. Every system must answer every prompt
(``missing_responses: skip_prompt`` leaves incomplete prompts out instead). A prompt id longer
than 40 characters (AlpacaEval's prompts are their instructions) appears in item ids as
``q`` and 10 hex digits of its SHA-1.
"""

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from chateval.core.items import DirectItem, EarlierTurn, Item, PairwiseItem, Response, Responses
from chateval.data.designs import check_design, design_pairs
from chateval.data.fields import field_value, is_absent
from chateval.data.files import read_records, response_files
from chateval.data.jsonl import category, numeric_scores, required_id, text_field, turn_texts
from chateval.data.side_files import PairKey, PairLabels, read_pair_labels, read_questions
from chateval.data.table import mapped_scores
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.data import DataConfig

log = logging.getLogger(__name__)

_Keys = tuple[str, str, str, str]
"""The fields holding (prompt, question, system, response)."""


def _read(data: "DataConfig", keys: _Keys, jsonl: bool) -> Responses:
    """Responses rows from every file ``data.path`` names (data/files.py), the question from
    ``data.questions`` when given, the human labels from ``data.labels_file``."""
    prompt_key, question_key, system_key, response_key = keys
    questions_file = data.questions.path if data.questions else None
    questions = read_questions(data.questions, data.turn) if data.questions else None
    turn = data.turn

    def question(record: dict[str, Any], prompt: str, where: str) -> list[str]:
        """The user's messages up to the judged one (one turn: just the question)."""
        if questions is None:
            if turn is None:
                return [text_field(record, question_key, where)]
            return turn_texts(record, question_key, where, turn)
        if prompt not in questions.text:
            raise DataError(f"{where}: prompt {prompt!r} is not in the questions file {questions_file}")
        return questions.turns[prompt] if turn is not None else [questions.text[prompt]]

    def replies(record: dict[str, Any], where: str) -> list[str]:
        """The system's replies up to the judged one (one turn: just the response)."""
        if turn is None:
            return [text_field(record, response_key, where)]
        return turn_texts(record, response_key, where, turn)

    def prompt_category(record: dict[str, Any], prompt: str, where: str) -> str | None:
        """The row's category (fields.category), else its prompt's in the questions file."""
        own = category(record, data.fields.category, where)
        return own if own is not None or questions is None else questions.categories.get(prompt)

    files = response_files(data)

    def system(record: dict[str, Any], where: str) -> str:
        if len(files) > 1 and is_absent(field_value(record, system_key)):
            # Several files whose rows name no system: most likely one file per system.
            raise DataError(
                f"{where}: missing field {system_key!r}; if each file holds one system's responses, "
                "set data.system_from: file (the file's name names the system) or folder (its folder's)"
            )
        return text_field(record, system_key, where)

    rows = []
    for file in files:
        for where, record in read_records(file.path):
            prompt = required_id(record, prompt_key, where)
            asked, said = question(record, prompt, where), replies(record, where)
            rows.append(
                Response(
                    prompt,
                    asked[-1],
                    file.system or system(record, where),
                    said[-1],
                    where,
                    numeric_scores(record, where) if jsonl else mapped_scores(record, data, where),
                    prompt_category(record, prompt, where),
                    tuple(zip(asked[:-1], said[:-1], strict=True)),
                )
            )
    if data.labels_file is None:
        return Responses(data.source, rows)
    labels = read_pair_labels(data.labels_file)
    return Responses(data.source, rows, labels.labels, labels.where)


def load_jsonl_responses(data: "DataConfig") -> Responses:
    """Responses rows with chateval's field names and a ``scores`` mapping (JSONL, or any file
    type data/files.py reads; one file or several)."""
    return _read(data, ("prompt", "question", "system", "response"), jsonl=True)


def load_table_responses(data: "DataConfig") -> Responses:
    """Responses rows from mapped tables (fields prompt, question, system, response; scores)."""
    f = data.fields
    return _read(data, (f.prompt or "prompt", f.question, f.system, f.response), jsonl=False)


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


def responses_table(
    responses: Responses, data: "DataConfig"
) -> tuple[dict[str, dict[str, Response]], list[str]]:
    """Each prompt's responses by system, and the systems in the order comparisons name them
    (``data.systems``, else first appearance); a system answering a prompt twice, or one
    prompt's rows with different questions, is refused."""
    table = _table(responses)
    return table.prompts, _systems(table, data, responses.source)


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


_LONG_PROMPT = 40


def _slug(name: str) -> str:
    """A name as it appears in an item id: whitespace runs become underscores."""
    return re.sub(r"\s+", "_", name.strip())


def _prompt_slug(prompt: str) -> str:
    """A prompt id in an item id; a long one (a whole instruction) as a short stable hash."""
    if len(prompt) <= _LONG_PROMPT:
        return _slug(prompt)
    return "q" + hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:10]


def comparison_id(prompt: str, system_a: str, system_b: str) -> str:
    """The id of one comparison: ``"{prompt}:{A}-vs-{B}"``."""
    return f"{_prompt_slug(prompt)}:{_slug(system_a)}-vs-{_slug(system_b)}"


def response_id(prompt: str, system: str) -> str:
    """The id of one response scored directly: ``"{prompt}:{system}"``."""
    return f"{_prompt_slug(prompt)}:{_slug(system)}"


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
    labels = PairLabels(responses.labels, responses.label_where)
    if task == "direct" and data.labels_file is not None:
        raise DataError(
            f"{data.labels_file.path}: pairwise labels; direct scoring reads human scores (data.scores)"
        )
    _check_label_systems(labels, table.systems)
    used: set[PairKey] = set()
    items: list[Item] = []
    seen: dict[str, tuple[str, str, str]] = {}
    for prompt in prompts:
        rows = table.prompts[prompt]
        if task == "direct":
            for system in systems:
                row = rows[system]
                item_id = response_id(prompt, system)
                _unique(item_id, (prompt, system, ""), seen, source)
                items.append(
                    DirectItem(
                        item_id,
                        _conversation(row),
                        row.response,
                        "",
                        row.scores,
                        group=prompt,
                        system=system,
                        category=row.category,
                    )
                )
            continue
        for a, b in design_pairs(design, systems, data.seed, prompt):
            item_id = comparison_id(prompt, a, b)
            _unique(item_id, (prompt, a, b), seen, source)
            found = labels.find(prompt, a, b)
            if found is not None:
                used.add(found[0])
            items.append(comparison_item(item_id, rows[a], rows[b], found[1] if found else None))
    _report_unjoined(labels, used, set(prompts), set(systems), table)
    return items


def comparison_item(item_id: str, row_a: Response, row_b: Response, label: Label | None) -> PairwiseItem:
    """The comparison of two systems' responses to one prompt (``row_a``'s system as A), with
    the conversation's earlier turns each system answered in its own words."""
    return PairwiseItem(
        item_id,
        row_a.question,
        row_a.response,
        row_b.response,
        label,
        system_a=row_a.system,
        system_b=row_b.system,
        prompt=row_a.prompt,
        category=row_a.category or row_b.category,
        earlier=tuple(
            EarlierTurn(asked, said_a, said_b)
            for (asked, said_a), (_, said_b) in zip(row_a.history, row_b.history, strict=True)
        ),
    )


def _conversation(row: Response) -> str:
    """A direct item's context: the question, after the turns before it (``data.turn``) with
    this system's own replies."""
    if not row.history:
        return row.question
    turns = [f"User: {asked}\nAssistant: {said}" for asked, said in row.history]
    return "\n".join([*turns, f"User: {row.question}"])


def _check_label_systems(labels: PairLabels, systems: Sequence[str]) -> None:
    """A labels file naming a system the data does not have is a typo, not a subset: refuse."""
    known = set(systems)
    for key, where in labels.where.items():
        unknown = [s for s in key[1:] if s not in known]
        if unknown:
            raise DataError(
                f"{where}: system {unknown[0]!r} is not in the responses data (systems: {', '.join(systems)})"
            )


def _report_unjoined(
    labels: PairLabels, used: set[PairKey], prompts: set[str], systems: set[str], table: _Table
) -> None:
    """Labels of a labels file that no built comparison took, counted by why (a warning, so a
    design or a limit that leaves labels unused is seen, not silently lost)."""
    reasons: dict[str, list[str]] = {}
    for key, where in labels.where.items():
        if key in used:
            continue
        prompt, a, b = key
        if prompt not in table.prompts:
            why = "prompt not in the responses data"
        elif prompt not in prompts:
            why = "prompt not judged (data.limit, or left out for a missing response)"
        elif a not in systems or b not in systems:
            why = "system not in data.systems"
        else:
            why = "pair not compared by the design (data.compare)"
        reasons.setdefault(why, []).append(where)
    for why, places in reasons.items():
        plural = "" if len(places) == 1 else "s"
        log.warning("%d human label%s not used: %s (first: %s)", len(places), plural, why, places[0])


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
