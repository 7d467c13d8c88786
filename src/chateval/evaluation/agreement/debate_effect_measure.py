"""Does the debate help? The blind vote before discussion against the final decision
(chateval.evaluation.agreement.debate_effect), as a registered measure
(chateval.evaluation.measures) at metrics.json's ``debate_effect``. A panel of several referees
without opinion probes records that it was not measured, and why.
"""

from collections.abc import Sequence
from typing import Any

from chateval.core.formatting import reading, signed_ci
from chateval.evaluation.agreement.debate_effect import debate_effect
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.paired import (
    BlindFinalDirect,
    BlindFinalPairwise,
    DirectDebateEffect,
    PairwiseDebateEffect,
)
from chateval.schema.verdicts import VerdictRecord

# Stored in metrics.json (the run folders of docs/results hold it); reports say NO_PROBES_SAID.
PROBES_OFF = "opinion probes off (opinion_probes: true)"
NO_PROBES_SAID = (
    "not measured: the referees gave no vote before the debate (opinion_probes: true asks for one)"
)


def _pairwise(found: BlindFinalPairwise, changed: str) -> str:
    accuracy, mcnemar = found["accuracy"], found["mcnemar"]
    return (
        f"accuracy blind {accuracy['blind']:.3f}, final {accuracy['final']:.3f} on {found['n']} items, "
        f"final minus blind {signed_ci(accuracy['difference'])}; {changed}; only blind "
        f"right {mcnemar['blind_only_right']}, only final right {mcnemar['final_only_right']}, "
        f"McNemar p = {mcnemar['p_value']:.3f}: {reading(accuracy['difference'], mcnemar['p_value'])}"
    )


def _direct(found: BlindFinalDirect, changed: str) -> str:
    average = found.get("average")
    spearman = average.get("spearman") if average else None
    if not spearman:
        return changed + "; no dimension's correlation is defined"
    blind, final = (
        "undefined" if spearman[side] is None else f"{spearman[side]:.3f}" for side in ("blind", "final")
    )
    return (
        f"average rho blind {blind}, final {final} on {found['n']} items, final minus blind "
        f"{signed_ci(spearman['difference'])}; {changed}: {reading(spearman['difference'])}"
    )


class DebateEffectMeasure:
    """The blind vote against the final decision (module doc)."""

    name = "debate_effect"
    title = "the debate's effect"
    top_level = True
    about = (
        "With opinion probes, each referee's blind verdict before any discussion, combined as the "
        "final verdicts are, against the panel's final decision on the same items (paired: bootstrap "
        "interval of final minus blind; pairwise, the exact McNemar test)."
    )

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> PairwiseDebateEffect | DirectDebateEffect | None:
        effect = (
            debate_effect("pairwise", records, settings.seed)
            if settings.task == "pairwise"
            else debate_effect("direct", records, settings.seed)
        )
        if effect is None and len(settings.referee_models) > 1:
            return {"items": 0, "left_out": len(records), "changed": 0, "unavailable": PROBES_OFF}
        return effect

    def text(self, section: Any) -> str:
        """One line answering "does the debate help?"."""
        if not section:
            return "-"
        if section.get("unavailable") == PROBES_OFF:
            # The stored reason names the setting; say what it would take to measure it.
            return NO_PROBES_SAID
        if "unavailable" in section:
            return f"not measured: {section['unavailable']}"
        said = f"the discussion changed {section['changed']} of {section['items']} decisions"
        said += f" ({section['left_out']} items without both left out)" if section["left_out"] else ""
        found = section.get("comparison")
        if not found:
            return said + "; no human labels to compare with"
        return _pairwise(found, said) if "mcnemar" in found else _direct(found, said)


DEBATE_EFFECT = DebateEffectMeasure()
