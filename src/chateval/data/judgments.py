"""Another tool's pairwise verdicts, read for ``chateval import``: each record a comparison of
two answers to a prompt with its verdict in one answer order or in both (the fields mapped by
the import config, dotted paths allowed; each verdict read by chateval.data.verdict_values),
and the right answers from human judgments in a file or an objective label in the same
records. The verdicts may fill several files (a folder, a glob: Arena-Hard's file per model).
A comparison's systems are named by a field, a constant or the file's name, or not at all
(JudgeBench's records: both answers come from one model, and the prompt names the
comparison). Every bad record is a DataError naming the file, the record and the field.

The loader of the format ``imported`` is here too (registered in chateval.core.choices): the
data section of a run folder that an import without data wrote names the verdicts file, which
holds nothing to debate.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chateval.core.items import Item
from chateval.data.fields import Missing, field_value, is_absent, label_problem
from chateval.data.files import expand_path, read_records
from chateval.data.jsonl import required_id, text_field
from chateval.data.record_filter import TurnAndJudge, turn_number
from chateval.data.side_files import PairKey
from chateval.data.verdict_values import Verdict, read_verdict
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.data import DataConfig
    from chateval.config.imports import ImportConfig, LabelsSource, SystemSource

_FLIP: dict[Label, Label] = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True)
class Judgment:
    """One comparison as the file judged it: each verdict with the order it was given in
    (``swapped``: B's answer shown first), all in A/B terms; ``label`` an objective label
    from the record. Systems None: the records name none (the prompt names the comparison)."""

    where: str  # file:line
    prompt: str
    system_a: str | None
    system_b: str | None
    verdicts: tuple[tuple[bool, Verdict], ...]  # (swapped, verdict), as the file gave them
    label: Label | None = None

    def reversed(self) -> "Judgment":
        """The same judgment with the systems the other way round: B is now A, so the order
        that showed A first is the swapped one, and every label names the other letter (and
        a verdict's share of the win is B's now)."""

        def flip(verdict: Verdict) -> Verdict:
            if verdict.label is None:
                return verdict
            share = None if verdict.share_a is None else 1.0 - verdict.share_a
            return Verdict(_FLIP[verdict.label], verdict.raw, verdict.weight, share)

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


def _objective_label(record: dict[str, Any], source: "LabelsSource", where: str) -> Label | None:
    """The record's own label (``labels.field``); null: none."""
    key = source.field or ""
    if field_value(record, key) is None:
        return None
    return source.values[_mapped(record, key, source.values, where)]


def _system(record: dict[str, Any], source: "SystemSource", file: Path, where: str) -> str | None:
    """The system ``source`` names for ``record`` of ``file`` (module doc)."""
    if source is None:
        return None
    if isinstance(source, str):
        return text_field(record, source, where)
    return file.stem if source.from_file else source.name


def _systems(
    record: dict[str, Any], config: "ImportConfig", file: Path, where: str
) -> tuple[str | None, str | None]:
    files = config.judgments
    a = _system(record, files.system_a, file, where)
    b = _system(record, files.system_b, file, where)
    if a is not None and a == b:
        raise DataError(
            f"{where}: system_a and system_b both name {a!r} ({_said(files.system_a)} and "
            f"{_said(files.system_b)}); a comparison needs two systems (records that name none: "
            "system_a and system_b null)"
        )
    return a, b


def _said(source: "SystemSource") -> str:
    """How the config names a system, for a message."""
    if isinstance(source, str):
        return f"field {source!r}"
    if source is None:
        return "none"
    return "the file's name" if source.from_file else f"the name {source.name!r}"


def read_judgments(config: "ImportConfig") -> Judgments:
    """The judgments of the import's verdicts file, of its turn and judge (module doc); a
    comparison judged twice, or records of several judges with none chosen, is refused."""
    files = config.judgments
    keys = [files.verdict] if files.swapped_verdict is None else [files.verdict, files.swapped_verdict]
    records = [(file, *record) for file in expand_path(files.path) for record in read_records(file)]
    kept: list[Judgment] = []
    first: dict[tuple[str, str | None, str | None], str] = {}
    wanted = TurnAndJudge(files.path, files.turn, config.kept_turn, files.judge, config.judge)
    skipped: Counter[str] = Counter()
    for file, where, record in records:
        if not wanted.keeps(record, where):
            continue
        prompt = required_id(record, files.prompt, where)
        a, b = _systems(record, config, file, where)
        for key in ((prompt, a, b), (prompt, b, a)):
            if key in first:
                what = f"{a} vs {b}" if a is not None else "(no systems named)"
                raise DataError(
                    f"{where}: prompt {prompt!r}, {what} is judged again (first at {first[key]}); "
                    "an import takes one verdict record per comparison (keep one turn or judge)"
                )
        first[(prompt, a, b)] = where
        swapped_values = files.swapped_values or files.values
        verdicts = tuple(
            (i == 1, read_verdict(record, key, files.values if i == 0 else swapped_values, files, where))
            for i, key in enumerate(keys)
        )
        skipped.update(v.raw for _, v in verdicts if v.label is None)
        label = None
        if config.labels is not None and config.labels.field is not None:
            label = _objective_label(record, config.labels, where)
        kept.append(Judgment(where, prompt, a, b, verdicts, label))
    wanted.check(len(kept))
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
        if source.turn is not None and turn_number(record, source.turn, where) != turn:
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
