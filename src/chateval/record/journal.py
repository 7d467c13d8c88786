"""The step journal (journal.jsonl, its lines' types in chateval.schema.journal): what makes a
run durable and resumable.

After every debate step the scheduler's new utterances are appended to ``journal.jsonl`` as one
write followed by a ``step_done`` marker, then flushed and fsynced. A run killed at any moment
leaves complete steps (marker present) and at most one incomplete tail, which ``load`` ignores
and ``truncate_to_complete`` cuts off before new steps are appended.

A new journal starts with its format (``{"format_version": N}``, chateval.record.migrations); a
journal without one is version 1, read through the migrations there.

A run with the adaptive design also journals each wave of comparisons it chooses (``{"wave":
k, "keys": [...]}``) before any of its debates starts, and why it stopped choosing (``{"stop":
reason}``), so a resumed run makes the same choices.

A step marked done twice (two runs wrote the folder at once, before run folders were locked:
chateval.record.lock) is read once when both copies said the same (its utterances, every field;
the usage counts may differ, as two processes' prefix caches and engine steps do): ``load``
warns in one line and drops the second copy, ``truncate_to_complete`` removes it from the file.
Copies that said different things are refused, naming both lines: which one to keep is not the
journal's to guess. A wave chosen twice alike is dropped the same way.
"""

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chateval.core.distributions import ScoreDistribution
from chateval.core.file_access import open_private
from chateval.core.textfile import write_bytes
from chateval.core.transcript import Turn, Utterance
from chateval.core.usage import ModelUsage
from chateval.errors import DataError
from chateval.record.migrations import FORMAT_VERSION, check_readable, counts_as_today, turn_kind_as_today
from chateval.record.reading import validated
from chateval.schema.journal import JournalHeader, JournalStep, JournalStop, JournalUtterance, JournalWave

log = logging.getLogger(__name__)


@dataclass
class JournalState:
    """The complete steps found in a journal.

    Barrier runs mark whole steps (``steps_done``); streaming runs mark each debate's steps
    (``progress``), and so do adaptive barrier runs, whose batches of waves run the plan one
    after another. A debate's progress is the larger of the two. ``waves`` and ``stop``: what
    an adaptive run had chosen.
    """

    steps_done: int = 0
    progress: dict[str, int] = field(default_factory=dict)
    utterances: dict[str, list[Utterance]] = field(default_factory=dict)
    usage: dict[str, ModelUsage] = field(default_factory=dict)
    valid_bytes: int = 0
    waves: list[list[str]] = field(default_factory=list)
    stop: str | None = None
    format_version: int = 1  # no header: a journal of an earlier release
    dropped: list[tuple[int, int]] = field(default_factory=list)  # second copies' byte ranges

    def debate_progress(self, key: str) -> int:
        return max(self.steps_done, self.progress.get(key, 0))


def append_step(
    path: Path,
    index: int,
    added: list[tuple[str, Utterance]],
    usage: dict[str, ModelUsage],
    debate: str | None = None,
    debates: Sequence[str] | None = None,
) -> None:
    """Append one finished step durably: its utterances, then its marker, then fsync.

    ``debate`` set: the step of that one debate (streaming); ``debates``: the step of those
    debates (an adaptive run's batch); neither: the step of all debates.
    """
    lines = [json.dumps(_utterance_record(index, key, u), ensure_ascii=False) for key, u in added]
    marker: dict[str, Any] = {"step_done": index, "usage": {m: u.counts() for m, u in usage.items()}}
    if debate is not None:
        marker["debate"] = debate
    if debates is not None:
        marker["debates"] = list(debates)
    lines.append(json.dumps(marker))
    _append(path, lines)


def start(path: Path, inputs: Mapping[str, str]) -> None:
    """Begin a new journal with its format and the run's input files' hashes (a resume with
    other data would mix two versions of it)."""
    _append(
        path, [json.dumps({"format_version": FORMAT_VERSION, "inputs": dict(inputs)}, ensure_ascii=False)]
    )


def changed_inputs(path: Path, inputs: Mapping[str, str]) -> list[str]:
    """The input files whose hash differs from the one the journal at ``path`` started with
    (one that started without hashes, from an earlier release, names none)."""
    if not path.is_file():
        return []
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        return []
    started = header.get("inputs") if isinstance(header, dict) else None
    if not isinstance(started, dict):
        return []
    return sorted(name for name in started.keys() | inputs.keys() if started.get(name) != inputs.get(name))


def append_wave(path: Path, index: int, keys: Sequence[str]) -> None:
    """Append the comparisons (item ids) an adaptive run chose as wave ``index``, durably."""
    _append(path, [json.dumps({"wave": index, "keys": list(keys)}, ensure_ascii=False)])


def append_stop(path: Path, reason: str) -> None:
    """Append why an adaptive run chooses no more waves, durably."""
    _append(path, [json.dumps({"stop": reason})])


def _append(path: Path, lines: list[str]) -> None:
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _utterance_record(index: int, key: str, u: Utterance) -> dict[str, Any]:
    record: dict[str, Any] = {
        "step": index,
        "debate": key,
        "round": u.turn.round,
        "agent": u.turn.agent,
        "turn": u.turn.kind,
        "scoring": u.turn.scoring,
        "speaker": u.speaker,
        "kind": u.kind,
        "text": u.text,
        "finish_reason": u.finish_reason,
        "tokens": u.tokens,
    }
    if u.distributions is not None:
        record["distributions"] = [d.as_dict() for d in u.distributions]
    return record


def utterance_payload(u: Utterance) -> dict[str, Any]:
    """An utterance as the judgment store keeps it: a journal line's fields but its step and debate."""
    record = _utterance_record(0, "", u)
    del record["step"], record["debate"]
    return record


def utterance_from_payload(payload: Any, where: str) -> Utterance:
    """An utterance the judgment store kept (``utterance_payload``); DataError naming ``where``
    when it does not have that shape."""
    if not isinstance(payload, dict):
        raise DataError(f"{where}: an utterance is not an object")
    return _utterance(validated({**payload, "step": 0, "debate": ""}, JournalUtterance, where))


def _utterance(record: JournalUtterance) -> Utterance:
    turn = Turn(record["round"], record["agent"], turn_kind_as_today(record), record.get("scoring", False))
    distributions = record.get("distributions")
    return Utterance(
        turn,
        record["speaker"],
        record["kind"],
        record["text"],
        record["finish_reason"],
        None if distributions is None else tuple(ScoreDistribution.from_dict(d) for d in distributions),
        record.get("tokens"),  # absent in journals of releases before token counts
    )


class _Marks:
    """Where each step (of every debate: ``None``, or of one debate) and each wave was first
    recorded, with a digest of what it said: a second record of the same is a copy to drop when
    it said the same, refused when not (module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.steps: dict[tuple[str | None, int], tuple[int, str]] = {}  # -> (line, digest)
        self.latest: dict[str | None, int] = {}  # the line of each scope's last step mark
        self.waves: list[int] = []  # each wave's line
        self.copies: list[str] = []  # the copies dropped, described

    def note(self, scope: str | None, step: int, line: int, said: list[JournalUtterance]) -> None:
        self.steps[(scope, step)] = (line, _digest(said))
        self.latest[scope] = line

    def check_copy(self, scope: str | None, step: int, line: int, said: list[JournalUtterance]) -> None:
        """A DataError naming both lines unless ``said`` is what the first mark of ``scope``'s
        ``step`` said."""
        first = self.steps.get((scope, step))
        what = f"step {step}" if scope is None else f"debate {scope!r} step {step}"
        if first is None or first[1] != _digest(said):
            # None: a later step's mark passed over it, or a mark of every debate's step.
            earlier = first[0] if first else self.latest.get(scope, self.latest.get(None))
            raise DataError(
                f"{self.path}: {what} is marked done twice, with different utterances (lines "
                f"{earlier} and {line}); pass --force to start over"
            )
        self.copies.append(f"{what}, lines {first[0]} and {line}")

    def warn(self) -> None:
        """One line for every copy dropped."""
        if self.copies:
            log.warning(
                "%s: %d record(s) written twice alike (two runs wrote this folder at once?): the "
                "second copies are dropped (first: %s)",
                self.path,
                len(self.copies),
                self.copies[0],
            )


def _digest(said: list[JournalUtterance]) -> str:
    return hashlib.sha256(json.dumps(said, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def load(path: Path) -> JournalState:
    """Read the complete steps of a journal (each debate's steps contiguous from 0); a step or
    wave written twice alike is read once, its second copy's bytes in ``dropped`` (module doc)."""
    state = JournalState()
    if not path.is_file():
        return state
    marks = _Marks(path)
    pending: list[tuple[str, Any]] = []  # a step's utterances (and where), read once it is marked done
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            start, offset = offset, offset + len(raw)
            if not raw.endswith(b"\n"):
                break  # a half-written last line: the step it belongs to never finished
            try:
                record = json.loads(raw)
            except json.JSONDecodeError:
                break
            where = f"{path}:{number}"
            if isinstance(record, dict) and "format_version" in record and number == 1:  # the header
                state.format_version = check_readable(
                    validated(record, JournalHeader, where)["format_version"], path
                )
                state.valid_bytes = offset
                continue
            if isinstance(record, dict) and ("wave" in record or "stop" in record):
                if pending:
                    break  # written between whole steps only: what precedes it never finished
                if not _choice(record, state, number, marks):
                    state.dropped.append((start, offset))
                state.valid_bytes = offset
                continue
            if not isinstance(record, dict) or "step_done" not in record:
                pending.append((where, record))
                continue
            if not _step(validated(record, JournalStep, where), pending, state, number, marks):
                state.dropped.append((state.valid_bytes, offset))  # the copy's utterances and mark
            pending = []
            state.valid_bytes = offset
    marks.warn()
    return state


def _step(
    record: JournalStep, pending: list[tuple[str, Any]], state: JournalState, line: int, marks: _Marks
) -> bool:
    """A step's mark (the journal's ``line``) and its utterances (``pending``) into ``state``;
    False: it is a copy of a step read already, dropped."""
    said = [validated(r, JournalUtterance, at) for at, r in pending]
    step = record["step_done"]
    keys = [record["debate"]] if "debate" in record else record.get("debates")
    scopes: list[str | None] = [None] if keys is None else list(keys)

    def said_in(scope: str | None) -> list[JournalUtterance]:
        return said if scope is None else [r for r in said if r["debate"] == scope]

    def done(scope: str | None) -> int:
        # Later steps may follow directly: steps with nothing to do leave no marker.
        return state.steps_done if scope is None else state.debate_progress(scope)

    copied = [scope for scope in scopes if step < done(scope)]
    if copied:
        for scope in copied:
            marks.check_copy(scope, step, line, said_in(scope))
        if len(copied) < len(scopes):  # a copy marks the same debates as its first
            raise DataError(
                f"{marks.path}:{line}: marks step {step} done for debates of which only some were "
                f"done already ({', '.join(map(repr, copied))}); pass --force to start over"
            )
        return False
    for scope in scopes:
        marks.note(scope, step, line, said_in(scope))
        if scope is None:
            state.steps_done = step + 1
        else:
            state.progress[scope] = step + 1
    for r in said if keys is None else [r for r in said if r["debate"] in set(keys)]:
        state.utterances.setdefault(r["debate"], []).append(_utterance(r))
    for model, counts in record["usage"].items():
        # A journal of an unfinished run of an earlier release: its names, read as today's.
        usage = ModelUsage.from_counts(counts_as_today(counts))
        state.usage.setdefault(model, ModelUsage()).merge(usage)
    return True


def _choice(record: dict[str, Any], state: JournalState, line: int, marks: _Marks) -> bool:
    """An adaptive run's wave or stop (the journal's ``line``) into ``state``; False: a copy of
    a wave read already, dropped."""
    where = f"{marks.path}:{line}"
    if "stop" in record:
        state.stop = validated(record, JournalStop, where)["stop"]
        return True
    wave = validated(record, JournalWave, where)
    index = wave["wave"]
    if index < len(state.waves):
        if state.waves[index] != list(wave["keys"]):
            raise DataError(
                f"{marks.path}: wave {index} is chosen twice, differently (lines {marks.waves[index]} "
                f"and {line}); pass --force to start over"
            )
        marks.copies.append(f"wave {index}, lines {marks.waves[index]} and {line}")
        return False
    if index != len(state.waves):
        raise DataError(f"{where}: wave {index} follows {len(state.waves)} waves")
    state.waves.append(list(wave["keys"]))
    marks.waves.append(line)
    return True


def truncate_to_complete(path: Path, state: JournalState) -> None:
    """Cut an incomplete tail so appended steps follow the last complete one; the copies
    ``load`` dropped are removed from the file too (written anew, atomically), and ``state``
    then describes the file as it is."""
    if state.dropped and path.is_file():
        whole = path.read_bytes()[: state.valid_bytes]
        kept, last = [], 0
        for start, end in state.dropped:
            kept.append(whole[last:start])
            last = end
        kept.append(whole[last:])
        write_bytes(path, b"".join(kept))
        state.valid_bytes, state.dropped = sum(len(part) for part in kept), []
    elif path.is_file() and path.stat().st_size != state.valid_bytes:
        with path.open("r+b") as handle:
            handle.truncate(state.valid_bytes)
            handle.flush()
            os.fsync(handle.fileno())
