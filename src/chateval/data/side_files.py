"""Files read beside responses data: the prompts' questions (``data.questions``) and human
pairwise labels (``data.labels_file``), both tables mapped by the config like the data itself.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chateval.data.fields import Missing, field_value, is_absent, label_problem
from chateval.data.files import read_records
from chateval.data.jsonl import category, required_id, text_field, turn_texts
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.data import LabelsFile, QuestionsFile

_FLIP: dict[Label, Label] = {"A": "B", "B": "A", "tie": "tie"}

PairKey = tuple[str, str, str]
"""(prompt, system_a, system_b) of one comparison."""


@dataclass(frozen=True)
class Questions:
    """The questions file: each prompt's question, and its category when ``questions.category``
    names the field (by prompt id)."""

    text: Mapping[str, str]
    categories: Mapping[str, str]
    turns: Mapping[str, list[str]]  # with data.turn: every turn's message up to the judged one


def read_questions(source: "QuestionsFile", turn: int | None = None) -> Questions:
    """Each prompt's question (and category) by prompt id; a prompt given twice with different
    text is refused. With ``turn`` the question field lists a conversation's user messages and
    the question is the ``turn``-th."""
    questions: dict[str, str] = {}
    categories: dict[str, str] = {}
    turns: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for where, record in read_records(source.path):
        prompt = required_id(record, source.prompt, where)
        if turn is None:
            question = text_field(record, source.question, where)
        else:
            turns[prompt] = turn_texts(record, source.question, where, turn)
            question = turns[prompt][-1]
        if prompt in questions and questions[prompt] != question:
            raise DataError(f"{where}: prompt {prompt!r} has another question at {first[prompt]}")
        questions.setdefault(prompt, question)
        first.setdefault(prompt, where)
        if (kind := category(record, source.category, where)) is not None:
            categories.setdefault(prompt, kind)
    if not questions:
        raise DataError(f"{source.path}: no records")
    return Questions(questions, categories, turns)


@dataclass(frozen=True)
class PairLabels:
    """Human labels by (prompt, system_a, system_b) as the file gives them, and where each is."""

    labels: Mapping[PairKey, Label]
    where: Mapping[PairKey, str]

    def find(self, prompt: str, a: str, b: str) -> tuple[PairKey, Label] | None:
        """The label of comparison (prompt, a, b) in a-b terms (flipped if the file has b-a)."""
        if (prompt, a, b) in self.labels:
            return (prompt, a, b), self.labels[(prompt, a, b)]
        if (prompt, b, a) in self.labels:
            return (prompt, b, a), _FLIP[self.labels[(prompt, b, a)]]
        return None


def read_pair_labels(source: "LabelsFile") -> PairLabels:
    """The labels file's rows; a bad value, a pair of one system, or a comparison labelled twice
    (in either order) is refused with the file, row and field."""
    labels: dict[PairKey, Label] = {}
    where_of: dict[PairKey, str] = {}
    allowed = ", ".join(sorted(source.values))
    for where, record in read_records(source.path):
        prompt = required_id(record, source.prompt, where)
        a = text_field(record, source.system_a, where)
        b = text_field(record, source.system_b, where)
        if a == b:
            raise DataError(f"{where}: fields {source.system_a!r} and {source.system_b!r} both name {a!r}")
        raw = field_value(record, source.label)
        value = None if is_absent(raw) else str(raw)
        if value not in source.values:
            shown = raw if isinstance(raw, Missing) else value
            raise DataError(f"{where}: {label_problem(record, source.label, shown, allowed)}")
        for key in ((prompt, a, b), (prompt, b, a)):
            if key in labels:
                raise DataError(
                    f"{where}: prompt {prompt!r}, {a} vs {b} is labelled again (first at {where_of[key]}); "
                    "give one label per comparison (combine several annotators' votes first)"
                )
        labels[(prompt, a, b)] = source.values[value]
        where_of[(prompt, a, b)] = where
    if not labels:
        raise DataError(f"{source.path}: no records")
    return PairLabels(labels, where_of)
