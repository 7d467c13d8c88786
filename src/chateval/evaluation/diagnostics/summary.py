"""Per-model diagnostics of a panel: how each model's referees relate to the panel, to humans,
and to their own earlier opinions.

Referees are grouped by the model that speaks for them; in a homogeneous panel there is one
group. For each model:

- ``agreement_with_panel``: pairwise, the share of its referees' item labels equal to the panel
  label; direct, the mean absolute difference between its scores and the panel mean.
- ``humans``: agreement of its referees' labels (or scores) with the human ones, pooled over its
  referees (same metrics as the panel). The bootstrap resamples items (Topical-Chat: dialogues)
  with all their referee rows: two referees' verdicts on one item are not independent
  evidence, and resampling the rows one by one would narrow the interval. Pairwise, every
  labelled item counts for every referee; a label that failed to parse is wrong.
- ``opinion_changes`` (runs with ``opinion_probes``): over its referees' debates, the share whose
  final verdict differs from the verdict given before any discussion, and the mean number of
  changes along [before discussion, after round 1, ..., final].
- ``parroting``: the share of its referees' utterances that echo the prompt's instructions, that
  repeat another referee's words they saw, and the share of its verdicts that repeat a verdict
  their speaker saw, the last two next to their chance baselines (see
  chateval.evaluation.diagnostics.parroting): high values mean a panel that repeats instead of judging.
- ``parroting`` also has the share of its referees' utterances that recite the item's text,
  and the permutation chance of its verdicts' copy share: how often they equal the seen
  referee's verdict on another debate, where nobody could have copied
  (chateval.evaluation.diagnostics.verdict_collapse).
- ``cut_off``: its utterances that ended at their token cap, per kind (its referees' discussions
  and assessments; summaries when it is the summarizer's model), and the verdicts whose
  assessment was cut off.
- ``empty_assessments``: its referees' assessments that came out empty
  (chateval.evaluation.diagnostics.cut_off).
- ``ceiling``: its referees' final verdicts at the scale's top (or bottom), and its referees
  (direct: and dimensions) whose scores never vary; only when the scales are given.

The same over the whole panel are registered measures (chateval.evaluation.diagnostics.
panel_measures), and chateval.evaluation.diagnostics.text says them in words, and when they
look like a panel that does not judge.
"""

from collections.abc import Collection, Mapping, Sequence
from statistics import fmean
from typing import Literal, overload

from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.diagnostics.cut_off import cut_off_summary, empty_summary
from chateval.evaluation.diagnostics.parroting import parroting_summary
from chateval.evaluation.diagnostics.verdict_collapse import score_extremes, with_permutation_chance
from chateval.evaluation.settings import Scales
from chateval.schema.agreement import PairwiseMetrics
from chateval.schema.diagnostics import (
    CutOffSummary,
    DirectModelDiagnostics,
    EmptyAssessments,
    OpinionChanges,
    PairwiseModelDiagnostics,
    ParrotingSummary,
    ScoreExtremes,
)
from chateval.schema.verdicts import RefereeRow, SummariesCutOff, VerdictRecord


def _changes(sequence: Sequence[object]) -> tuple[bool, int] | None:
    """(final differs from first, number of changes) of a verdict sequence; None if incomplete."""
    if len(sequence) < 2 or any(v is None for v in sequence):
        return None
    flips = sum(1 for before, after in zip(sequence, sequence[1:], strict=False) if before != after)
    return sequence[0] != sequence[-1], flips


def _opinion_summary(sequences: Sequence[Sequence[object]]) -> OpinionChanges | None:
    if not sequences:
        return None
    measured = [c for c in map(_changes, sequences) if c is not None]
    return {
        "referee_debates": len(measured),
        "changed_share": fmean(float(changed) for changed, _ in measured) if measured else None,
        "mean_changes": fmean(flips for _, flips in measured) if measured else None,
    }


def parroting_of(
    rows: Sequence[RefereeRow], records: Sequence[VerdictRecord], agents: Collection[str] | None = None
) -> ParrotingSummary | None:
    """The parroting of ``rows`` (the verdict rows of ``agents``, None: every referee), with
    the permutation chance of their copied verdicts over ``records``."""
    behaviours = [row["parroting"] for row in rows if "parroting" in row]
    if not behaviours:
        return None
    return with_permutation_chance(parroting_summary(behaviours), records, agents)


def referee_rows(records: Sequence[VerdictRecord]) -> list[RefereeRow]:
    """Every referee row of ``records`` (pairwise: of both answer orders)."""
    return [
        row
        for r in records
        for row in ([x for o in r["orders"] for x in o["referees"]] if "orders" in r else r["referees"])
    ]


def cut_off_of(rows: Sequence[RefereeRow], summaries: Sequence[SummariesCutOff]) -> CutOffSummary | None:
    return cut_off_summary([row["cut_off"] for row in rows if "cut_off" in row], summaries)


def ceiling_of(
    records: Sequence[VerdictRecord], scales: Scales | None, agents: Collection[str] | None = None
) -> ScoreExtremes | None:
    return None if scales is None else score_extremes(records, scales, agents)


def empty_of(rows: Sequence[RefereeRow]) -> EmptyAssessments | None:
    """Empty assessments of ``rows``; None when no row counted its turns (early releases)."""
    return empty_summary(rows) if any("cut_off" in row or "assessment" in row for row in rows) else None


def _pooled_humans(labelled: Sequence[tuple[str, str | None, str]], seed: int) -> PairwiseMetrics:
    """Pairwise agreement of (human label, referee label, item id) rows, items resampled with
    all their referee rows."""
    truth, predicted, items = zip(*labelled, strict=True)
    return pairwise_metrics(truth, predicted, seed, items, "items")


def _pairwise_model(
    records: Sequence[VerdictRecord],
    agents: list[str],
    seed: int,
    cut_off: CutOffSummary | None,
    scales: Scales | None,
) -> PairwiseModelDiagnostics:
    own = [(r, r["referee_labels"][a]) for r in records for a in agents if a in r["referee_labels"]]
    with_panel = [label == r["label"] for r, label in own if r["label"] is not None]
    labelled = [
        (human, r["referee_labels"].get(a), r["item_id"])
        for r in records
        if (human := r.get("human_label")) is not None
        for a in agents
    ]
    sequences = [
        [*ref["opinions"], ref.get("winner")]
        for r in records
        for order in r["orders"]
        for ref in order["referees"]
        if ref["agent"] in agents and "opinions" in ref
    ]
    rows = [ref for r in records for o in r["orders"] for ref in o["referees"] if ref["agent"] in agents]
    return {
        "referees": agents,
        "verdicts": len(own),
        "agreement_with_panel": fmean(with_panel) if with_panel else None,
        "humans": _pooled_humans(labelled, seed) if labelled else None,
        "opinion_changes": _opinion_summary(sequences),
        "parroting": parroting_of(rows, records, agents),
        "cut_off": cut_off,
        "empty_assessments": empty_of(rows),
        "ceiling": ceiling_of(records, scales, agents),
    }


def _direct_model(
    records: Sequence[VerdictRecord],
    agents: list[str],
    seed: int,
    cut_off: CutOffSummary | None,
    scales: Scales | None,
) -> DirectModelDiagnostics:
    own = [(r, ref) for r in records for ref in r["referees"] if ref["agent"] in agents and "scores" in ref]
    gaps = [abs(v - panel[d]) for r, ref in own if (panel := r["scores"]) for d, v in ref["scores"].items()]
    truth: dict[str, list[float]] = {}
    predicted: dict[str, list[float]] = {}
    clusters: dict[str, list[str]] = {}
    # Resample dialogues where items come in groups, else items: each with all its referee rows.
    grouped = all("group" in r for r in records)
    for r, ref in own:
        for name, value in ref["scores"].items():
            if (human := r["human_scores"]) and name in human:
                truth.setdefault(name, []).append(human[name])
                predicted.setdefault(name, []).append(value)
                clusters.setdefault(name, []).append(r.get("group", "") if grouped else r["item_id"])
    sequences = [
        [*ref["opinions"], ref.get("scores")]
        for r in records
        for ref in r["referees"]
        if ref["agent"] in agents and "opinions" in ref
    ]
    rows = [ref for r in records for ref in r["referees"] if ref["agent"] in agents]
    return {
        "referees": agents,
        "verdicts": len(own),
        "mean_abs_diff_from_panel": fmean(gaps) if gaps else None,
        "humans": direct_metrics(truth, predicted, seed, clusters, "groups" if grouped else "items")
        if truth
        else None,
        "opinion_changes": _opinion_summary(sequences),
        "parroting": parroting_of(rows, records, agents),
        "cut_off": cut_off,
        "empty_assessments": empty_of(rows),
        "ceiling": ceiling_of(records, scales, agents),
    }


@overload
def per_model(
    task: Literal["pairwise"],
    records: Sequence[VerdictRecord],
    agent_models: Mapping[str, str],
    seed: int,
    summarizer: str | None = None,
    scales: Scales | None = None,
) -> dict[str, PairwiseModelDiagnostics]: ...
@overload
def per_model(
    task: Literal["direct"],
    records: Sequence[VerdictRecord],
    agent_models: Mapping[str, str],
    seed: int,
    summarizer: str | None = None,
    scales: Scales | None = None,
) -> dict[str, DirectModelDiagnostics]: ...
def per_model(
    task: Literal["pairwise", "direct"],
    records: Sequence[VerdictRecord],
    agent_models: Mapping[str, str],
    seed: int,
    summarizer: str | None = None,
    scales: Scales | None = None,
) -> dict[str, PairwiseModelDiagnostics] | dict[str, DirectModelDiagnostics]:
    """Diagnostics per model; ``agent_models`` maps referee names to their model, ``summarizer``
    is the summarizer's model (the summaries' cut-offs count for it), ``scales`` each score's
    scale (``ceiling`` is None without them)."""
    by_model: dict[str, list[str]] = {}
    for agent, model in agent_models.items():
        by_model.setdefault(model, []).append(agent)
    summaries = [r["cut_off"] for r in records if "cut_off" in r]
    if summarizer is not None and summaries:
        by_model.setdefault(summarizer, [])  # a model that only summarizes has its cut-offs too
    rows = referee_rows(records)
    cut_offs = {
        model: cut_off_of(
            [row for row in rows if row["agent"] in agents], summaries if model == summarizer else []
        )
        for model, agents in by_model.items()
    }
    if task == "pairwise":
        return {
            model: _pairwise_model(records, agents, seed, cut_offs[model], scales)
            for model, agents in by_model.items()
        }
    return {
        model: _direct_model(records, agents, seed, cut_offs[model], scales)
        for model, agents in by_model.items()
    }
