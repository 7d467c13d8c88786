"""Adaptive comparisons in a run: the adaptive design (evaluation/adaptive_design.py) chooses
which of the candidate comparisons the scheduler debates.

Every item of the all_pairs design is a candidate. The run starts with the design's two seeded
waves; as the debates of a chosen item end (both answer orders), its verdict record becomes the
``Comparison`` the design records, and every wave the design can then choose joins the run at
once: streaming, into engines still busy with the wave before it (the refit takes
milliseconds, so they never wait for it); with step barriers, as the next batch. The design
chooses wave k + 2 from waves 0..k only, so both ways choose the same waves.

Each wave is journalled before any of its debates starts, and so is the reason the design
stopped. A resumed run restores them, replays the journalled debates, records the comparisons
of the items they finish and goes on: it chooses what the uninterrupted run would have.
"""

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from chateval.config.run import RunConfig
from chateval.core.items import Item, PairwiseItem
from chateval.core.transcript import Debate, Utterance
from chateval.core.usage import ModelUsage
from chateval.debate.panel import Panel
from chateval.errors import ConfigError, DataError
from chateval.evaluation.systems.adaptive_design import AdaptiveDesign, AdaptiveSettings, Candidate
from chateval.evaluation.systems.section import decided_comparison
from chateval.record import journal
from chateval.run.records import item_records
from chateval.schema.run_info import AdaptiveInfo

log = logging.getLogger(__name__)


class AdaptiveRun:
    """One run's adaptive design, fed with the debates that end and feeding the scheduler the
    debates of the waves it chooses (``first``, then ``on_debate_done``)."""

    def __init__(
        self,
        config: RunConfig,
        debates: Sequence[Debate],
        panel: Panel,
        path: Path,
        state: journal.JournalState,
    ) -> None:
        """``debates``: every candidate's debates (both answer orders); ``path`` and ``state``:
        the run's journal and what it held (a resumed run's waves and stop)."""
        adaptive = config.data.design().adaptive
        if adaptive is None:
            raise ValueError("the run's data.compare is not adaptive")
        self.panel = panel
        self.path = path
        self.groups: dict[str, list[Debate]] = {}
        for debate in debates:
            self.groups.setdefault(debate.item.id, []).append(debate)
        candidates = [_candidate(group[0].item) for group in self.groups.values()]
        budget = adaptive.budget
        if budget > len(candidates):
            log.warning(
                "data.compare.adaptive.budget: %d is more than the %d candidate comparisons; "
                "the run debates %d at most",
                budget,
                len(candidates),
                len(candidates),
            )
            budget = len(candidates)
        systems = list(dict.fromkeys(s for c in candidates for s in (c.system_a, c.system_b)))
        settings = AdaptiveSettings(budget, adaptive.wave, adaptive.top_k, config.data.seed)
        self.design = AdaptiveDesign(candidates, systems, settings)
        self.ended: Counter[str] = Counter()  # debates ended, per item
        if state.waves:
            try:
                self.design.restore(state.waves, state.stop)
            except ValueError as exc:
                raise DataError(f"{path}: {exc}; pass --force to start over") from None
        else:
            self.design.start()
        # What the journal holds already: these are not written again.
        self.journalled = len(state.waves)
        self.stop_journalled = state.stop is not None
        log.info(
            "adaptive design: up to %d of %d candidate comparisons, in waves of up to %d",
            budget,
            len(candidates),
            adaptive.wave,
        )

    def first(self) -> list[Debate]:
        """The debates of every wave chosen so far (the seeded two, or a resumed run's), each
        wave journalled before its debates are handed out."""
        self.design.ready()  # an empty seeded wave (a tiny budget) lets the next be chosen now
        self._journal()
        return self._debates(0)

    def on_debate_done(self, debate: Debate) -> list[Debate]:
        """A debate ended: once its item's debates all have, record the item's comparison; the
        debates of the waves that lets the design choose (journalled first)."""
        key = debate.item.id
        self.ended[key] += 1
        group = self.groups[key]
        if self.ended[key] < len(group):
            return []
        (record,) = item_records(group, self.panel)
        self.design.record(key, decided_comparison(record))
        before = len(self.design.waves)
        self.design.ready()
        self._journal()
        return self._debates(before)

    def journal_step(
        self, index: int, added: list[tuple[Debate, Utterance]], usage: dict[str, ModelUsage]
    ) -> None:
        """Journal one barrier step of a batch of waves: each debate's step marked on its own, as
        streaming does, since the next batch runs the plan from its first step again."""
        stepped = list(dict.fromkeys(d.key for d, _ in added))
        journal.append_step(self.path, index, [(d.key, u) for d, u in added], usage, debates=stepped)

    def chosen_debates(self) -> list[Debate]:
        """The debates of every chosen item, wave by wave (both orders of an item together)."""
        return self._debates(0)

    def info(self) -> AdaptiveInfo:
        """run.json's ``adaptive`` section."""
        settings = self.design.settings
        return {
            "budget": settings.budget,
            "wave": settings.wave,
            "top_k": settings.top_k,
            "candidates": len(self.groups),
            "chosen": len(self.design.chosen),
            "waves": len(self.design.waves),
            "stop": self.design.stop,
        }

    def _debates(self, first_wave: int) -> list[Debate]:
        """The debates of the waves from ``first_wave`` on."""
        return [d for wave in self.design.waves[first_wave:] for key in wave for d in self.groups[key]]

    def _journal(self) -> None:
        """Append the waves and the stop the journal does not hold yet."""
        for index in range(self.journalled, len(self.design.waves)):
            journal.append_wave(self.path, index, self.design.waves[index])
        self.journalled = len(self.design.waves)
        if self.design.stop is not None and not self.stop_journalled:
            journal.append_stop(self.path, self.design.stop)
            self.stop_journalled = True


def _candidate(item: Item) -> Candidate:
    """The candidate of one all_pairs item."""
    if not isinstance(item, PairwiseItem) or None in (item.prompt, item.system_a, item.system_b):
        raise ConfigError(f"item {item.id!r}: the adaptive design compares named systems on prompts")
    return Candidate(item.id, str(item.prompt), str(item.system_a), str(item.system_b))
