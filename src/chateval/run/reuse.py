"""A run's use of the judgment store (chateval.store): the debates it holds are taken instead of
judged, and every debate the run finishes is kept there as it ends.

Which store: the command line's ``--cache DIR`` / ``--no-cache``, else the config's ``cache``
(true: the default place, chateval.store.location; a folder; false: none). A reused debate's
transcript is copied into the run as the store kept it, and the run folder records where it came
from (the store key, the folder and time of the run that judged it), so the folder stays the
whole truth about its run.
"""

import logging
import time
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chateval.core.transcript import Debate, Transcript
from chateval.debate.scheduler import ended
from chateval.errors import DataError
from chateval.record.journal import utterance_from_payload, utterance_payload
from chateval.run.judgment_keys import DebateKeys, debate_keys
from chateval.run.session import Session
from chateval.schema.run_info import StoreInfo
from chateval.schema.transcripts import ReusedFrom
from chateval.store.judgments import JudgmentStore, StoredDebate
from chateval.store.location import default_store_folder

log = logging.getLogger(__name__)

CacheChoice = bool | Path  # a config's ``cache``, or the command line's choice


def store_folder(choice: CacheChoice) -> Path | None:
    """The store's folder for ``choice``: None when the run uses none."""
    if choice is False:
        return None
    return default_store_folder() if choice is True else Path(choice).expanduser()


@dataclass
class Reuse:
    """One run's store: its keys, what it took from it and what it kept there."""

    store: JudgmentStore
    keys: DebateKeys
    judged_in: str  # this run's folder
    judged_at: str  # when it started
    store_keys: dict[str, str] = field(default_factory=dict)  # debate key -> store key
    reused: dict[str, StoredDebate] = field(default_factory=dict)  # debate key -> what was taken
    kept: set[str] = field(default_factory=set)  # debate keys stored by this run
    seconds: float = 0.0  # spent on keys, look-ups and writes (run.json: the store's overhead)

    def take(self, debates: Sequence[Debate], progress: MutableMapping[str, int]) -> None:
        """Give every debate of ``debates`` the store holds its stored transcript, marked done
        in ``progress`` (the scheduler then leaves it alone); keep those a resumed run's journal
        had finished. An entry that does not read as utterances is judged again, with a warning."""
        started = time.perf_counter()
        plan = len(self.keys.panel.plan())
        self.store_keys.update((d.key, self.keys.key(d)) for d in debates)
        found = self.store.get_many([self.store_keys[d.key] for d in debates])
        for debate in debates:
            entry = found.get(self.store_keys[debate.key])
            if entry is not None and progress.get(debate.key, 0) < plan:
                try:
                    where = f"{self.store.path}: entry {entry.key[:12]}"
                    utterances = [utterance_from_payload(u, where) for u in entry.utterances]
                except DataError as exc:
                    log.warning("judgment store: %s; that debate is judged again", exc)
                    continue
                debate.transcript = Transcript(tuple(utterances))
                progress[debate.key] = plan
                self.reused[debate.key] = entry
            elif progress.get(debate.key, 0) >= plan:
                self.keep(debate)
        self.seconds += time.perf_counter() - started

    def keep(self, debate: Debate) -> None:
        """Store ``debate`` (finished: its whole transcript), once."""
        if debate.key in self.kept or debate.key in self.reused:
            return
        started = time.perf_counter()
        utterances = [utterance_payload(u) for u in debate.transcript.utterances]
        key = self.store_keys.get(debate.key) or self.keys.key(debate)
        self.store.put(StoredDebate(key, self.keys.fingerprint, utterances, self.judged_in, self.judged_at))
        self.kept.add(debate.key)
        self.seconds += time.perf_counter() - started

    def keep_ended(self, debates: Iterable[Debate], index: int) -> None:
        """Store each of ``debates`` that has nothing left to do after step ``index``."""
        rest = self.keys.panel.plan()[index + 1 :]
        for debate in debates:
            if debate.key not in self.kept and ended(self.keys.panel, debate, rest):
                self.keep(debate)

    def reused_from(self, debate: Debate) -> ReusedFrom | None:
        """Where a reused debate was judged (transcripts.jsonl), None for one judged now."""
        entry = self.reused.get(debate.key)
        if entry is None:
            return None
        return {"key": entry.key, "judged_in": entry.judged_in, "judged_at": entry.judged_at}

    def info(self, debates: Sequence[Debate]) -> StoreInfo:
        """run.json's account: where the store is, and how many of ``debates`` came from it."""
        reused = sum(1 for d in debates if d.key in self.reused)
        return {
            "path": str(self.store.path),
            "panel": self.keys.fingerprint,
            "reused": reused,
            "judged": len(debates) - reused,
            "seconds": round(self.seconds, 3),
        }

    def close(self) -> None:
        self.store.close()


def open_reuse(session: Session, choice: CacheChoice, judged_in: Path, judged_at: str) -> Reuse | None:
    """The run's store, opened, and its panel's keys; None when the run uses no store, or a
    model has nothing to fingerprint (said in one line)."""
    folder = store_folder(choice)
    if folder is None:
        return None
    started = time.perf_counter()
    store = JudgmentStore(folder)
    keys = debate_keys(session, store)
    if keys is None:
        store.close()
        return None
    store.describe_panel(keys.fingerprint, keys.description)
    reuse = Reuse(store, keys, str(judged_in.resolve()), judged_at)
    reuse.seconds = time.perf_counter() - started  # the model folders' digests included
    return reuse
