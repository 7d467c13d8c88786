"""Another tool's pairwise verdicts, read for ``chateval import``: each record a comparison of
two systems' answers to a prompt with its verdict in one answer order or in both (the fields
mapped by the import config, dotted paths allowed), and the right answers from human judgments
in a file or an objective label in the same records. Every bad record is a DataError naming
the file, the record and the field.

The loader of the format ``imported`` is here too (registered in chateval.core.choices): the
data section of a run folder that an import without data wrote names the verdicts file, which
holds nothing to debate.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chateval.core.items import Item
from chateval.data.fields import Missing, field_value, is_absent, label_problem, missing_text
from chateval.data.files import read_records
from chateval.data.jsonl import required_id, text_field
from chateval.data.side_files import PairKey
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.data import DataConfig
    from chateval.config.imports import ImportConfig, LabelsSource, VerdictValue

_FLIP: dict[Label, Label] = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True)
class Verdict:
    """A verdict in one answer order, in A/B terms; ``label`` None: the judge gave none (a
    value the config maps to skip), ``raw`` the value as the file has it."""

    label: Label | None
    raw: str


@dataclass(frozen=True)
class Judgment:
    """One comparison as the file judged it: each verdict with the order it was given in
    (``swapped``: B's answer shown first), all in A/B terms; ``label`` an objective label
    from the record."""

    where: str  # file:line
    prompt: str
    system_a: str
    system_b: str
    verdicts: tuple[tuple[bool, Verdict], ...]  # (swapped, verdict), as the file gave them
    label: Label | None = None

    def reversed(self) -> "Judgment":
        """The same judgment with the systems the other way round: B is now A, so the order
        that showed A first is the swapped one, and every label names the other letter."""

        def flip(verdict: Verdict) -> Verdict:
            return verdict if verdict.label is None else Verdict(_FLIP[verdict.label], verdict.raw)

        return Judgment(
            self.where,
            self.prompt,
            self.system_b,
            self.system_a,
            tuple((not swapped, flip(verdict)) for swapped, verdict in self.verdicts),
            None if self.label is None else _FLIP[self.label],
        )


@dataclass(frozen=True)
class Judgments:
    """What the verdicts file gave: the judgments kept, the records read, the records left
    out for another turn or judge, and how many verdicts each skipped value stood for."""

    kept: list[Judgment]
    records: int
    filtered: int
    skipped: Mapping[str, int]


def _mapped(record: dict[str, Any], key: str, values: Mapping[str, Any], where: str) -> str:
    """The value of field ``key`` as text, when ``values`` maps it; a DataError naming the
    record and field when it is missing or unmapped."""
    raw = field_value(record, key)
    value = None if is_absent(raw) else str(raw)
    if value is None or value not in values:
        shown = raw if isinstance(raw, Missing) else value
        raise DataError(f"{where}: {label_problem(record, key, shown, ', '.join(sorted(values)))}")
    return value


def _verdict(record: dict[str, Any], key: str, values: Mapping[str, "VerdictValue"], where: str) -> Verdict:
    value = _mapped(record, key, values, where)
    mapped = values[value]
    return Verdict(None, value) if mapped == "skip" else Verdict(mapped, value)


def _turn(record: dict[str, Any], key: str, where: str) -> int:
    """The record's turn (an integer, or digits as text)."""
    raw = field_value(record, key)
    if is_absent(raw):
        raise DataError(f"{where}: {missing_text(key, raw)}")
    digits = isinstance(raw, str) and raw.strip().isdigit()
    if isinstance(raw, bool) or not (isinstance(raw, int) or digits):
        raise DataError(f"{where}: field {key!r} must be a turn number, got {raw!r}")
    return int(raw)


def _objective_label(record: dict[str, Any], source: "LabelsSource", where: str) -> Label | None:
    """The record's own label (``labels.field``); null: none."""
    key = source.field or ""
    if field_value(record, key) is None:
        return None
    return source.values[_mapped(record, key, source.values, where)]


def _systems(record: dict[str, Any], config: "ImportConfig", where: str) -> tuple[str, str]:
    files = config.judgments
    a = text_field(record, files.system_a, where)
    b = text_field(record, files.system_b, where)
    if a == b:
        raise DataError(f"{where}: fields {files.system_a!r} and {files.system_b!r} both name {a!r}")
    return a, b


def read_judgments(config: "ImportConfig") -> Judgments:
    """The judgments of the import's verdicts file, of its turn and judge (module doc); a
    comparison judged twice, or records of several judges with none chosen, is refused."""
    files = config.judgments
    keys = [files.verdict] if files.swapped_verdict is None else [files.verdict, files.swapped_verdict]
    records = read_records(files.path)
    kept: list[Judgment] = []
    first: dict[PairKey, str] = {}
    judges: dict[str, str] = {}
    skipped: Counter[str] = Counter()
    for where, record in records:
        if files.turn is not None and _turn(record, files.turn, where) != config.kept_turn:
            continue
        if files.judge is not None:
            judge = text_field(record, files.judge, where)
            if config.judge is not None and judge != config.judge:
                continue
            judges.setdefault(judge, where)
        prompt = required_id(record, files.prompt, where)
        a, b = _systems(record, config, where)
        for key in ((prompt, a, b), (prompt, b, a)):
            if key in first:
                raise DataError(
                    f"{where}: prompt {prompt!r}, {a} vs {b} is judged again (first at {first[key]}); "
                    "an import takes one verdict record per comparison (keep one turn or judge)"
                )
        first[(prompt, a, b)] = where
        swapped_values = files.swapped_values or files.values
        verdicts = tuple(
            (i == 1, _verdict(record, key, files.values if i == 0 else swapped_values, where))
            for i, key in enumerate(keys)
        )
        skipped.update(v.raw for _, v in verdicts if v.label is None)
        label = None
        if config.labels is not None and config.labels.field is not None:
            label = _objective_label(record, config.labels, where)
        kept.append(Judgment(where, prompt, a, b, verdicts, label))
    if len(judges) > 1:
        named = ", ".join(f"{judge!r} ({where})" for judge, where in judges.items())
        raise DataError(
            f"{files.path}: field {files.judge!r} names several judges ({named}); keep one with `judge`"
        )
    if not kept:
        what = f"turn {config.kept_turn}" if files.turn is not None else "any turn"
        judge = f" of judge {config.judge!r}" if config.judge is not None else ""
        raise DataError(f"{files.path}: no record of {what}{judge}")
    return Judgments(kept, len(records), len(records) - len(kept), dict(skipped))


@dataclass(frozen=True)
class LabelVotes:
    """The human votes of a labels file by (prompt, system_a, system_b) as the file gives them."""

    votes: Mapping[PairKey, list[Label]]
    where: Mapping[PairKey, str]  # the first vote's record

    def find(self, prompt: str, a: str, b: str) -> tuple[list[PairKey], list[Label]]:
        """Every vote on comparison (prompt, a, b), in a-b terms, and the keys (either order)
        they were given under; empty lists: none."""
        keys = [key for key in ((prompt, a, b), (prompt, b, a)) if key in self.votes]
        found = [vote if key[1] == a else _FLIP[vote] for key in keys for vote in self.votes[key]]
        return keys, found


def majority(votes: list[Label]) -> Label:
    """The label of a strict majority of ``votes``; tie when none has one."""
    label, count = Counter(votes).most_common(1)[0]
    return label if count * 2 > len(votes) else "tie"


def read_label_votes(source: "LabelsSource", turn: int) -> LabelVotes:
    """The votes of a labels file (``labels.path``), of turn ``turn`` when ``labels.turn``
    names the field; a bad value names the file, record and field."""
    if source.path is None:
        raise ValueError("read_label_votes: the labels are a field of the judgments, not a file")
    votes: dict[PairKey, list[Label]] = {}
    where_of: dict[PairKey, str] = {}
    for where, record in read_records(source.path):
        if source.turn is not None and _turn(record, source.turn, where) != turn:
            continue
        prompt = required_id(record, source.prompt, where)
        a = text_field(record, source.system_a, where)
        b = text_field(record, source.system_b, where)
        if a == b:
            raise DataError(f"{where}: fields {source.system_a!r} and {source.system_b!r} both name {a!r}")
        value = _mapped(record, source.label, source.values, where)
        votes.setdefault((prompt, a, b), []).append(source.values[value])
        where_of.setdefault((prompt, a, b), where)
    return LabelVotes(votes, where_of)


def nothing_to_debate(data: "DataConfig") -> list[Item]:
    """The data of a run folder imported without data: its verdicts file, nothing to debate."""
    raise DataError(
        f"{data.source}: format 'imported' names the verdicts `chateval import` read into a run "
        "folder; it holds no prompts or answers to debate (judge the import config's data instead)"
    )
