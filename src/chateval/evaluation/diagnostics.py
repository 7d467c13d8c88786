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
  chateval.evaluation.panel_behaviour): high values mean a panel that repeats instead of judging.
- ``cut_off``: its utterances that ended at their token cap, per kind (its referees' discussions
  and assessments; summaries when it is the summarizer's model), and the verdicts whose
  assessment was cut off.

``run_diagnostics`` gives ``parroting`` and ``cut_off`` over the whole panel, and
``degenerate_reasons`` says when those look like a panel that does not judge.
"""

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Literal, overload

from chateval.core.schema.metrics import (
    CutOffSummary,
    DirectModelDiagnostics,
    OpinionChanges,
    PairwiseMetrics,
    PairwiseModelDiagnostics,
    PanelDiagnostics,
    ParrotingSummary,
)
from chateval.core.schema.records import RefereeRow, SummariesCutOff, VerdictRecord
from chateval.evaluation.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.panel_behaviour import NOT_RECORDED, cut_off_summary, parroting_summary


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


def _parroting(rows: Sequence[RefereeRow]) -> ParrotingSummary | None:
    behaviours = [row["parroting"] for row in rows if "parroting" in row]
    return parroting_summary(behaviours) if behaviours else None


def _referee_rows(records: Sequence[VerdictRecord]) -> list[RefereeRow]:
    """Every referee row of ``records`` (pairwise: of both answer orders)."""
    return [
        row
        for r in records
        for row in ([x for o in r["orders"] for x in o["referees"]] if "orders" in r else r["referees"])
    ]


def _cut_off(rows: Sequence[RefereeRow], summaries: Sequence[SummariesCutOff]) -> CutOffSummary | None:
    return cut_off_summary([row["cut_off"] for row in rows if "cut_off" in row], summaries)


def run_diagnostics(records: Sequence[VerdictRecord]) -> PanelDiagnostics:
    """``parroting`` and ``cut_off`` over every referee (and summary) of the run."""
    rows = _referee_rows(records)
    return {
        "parroting": _parroting(rows),
        "cut_off": _cut_off(rows, [r["cut_off"] for r in records if "cut_off" in r]),
    }


def _pooled_humans(labelled: Sequence[tuple[str, str | None, str]], seed: int) -> PairwiseMetrics:
    """Pairwise agreement of (human label, referee label, item id) rows, items resampled with
    all their referee rows."""
    truth, predicted, items = zip(*labelled, strict=True)
    return pairwise_metrics(truth, predicted, seed, items, "items")


def _pairwise_model(
    records: Sequence[VerdictRecord], agents: list[str], seed: int, cut_off: CutOffSummary | None
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
    return {
        "referees": agents,
        "verdicts": len(own),
        "agreement_with_panel": fmean(with_panel) if with_panel else None,
        "humans": _pooled_humans(labelled, seed) if labelled else None,
        "opinion_changes": _opinion_summary(sequences),
        "parroting": _parroting(
            [ref for r in records for o in r["orders"] for ref in o["referees"] if ref["agent"] in agents]
        ),
        "cut_off": cut_off,
    }


def _direct_model(
    records: Sequence[VerdictRecord], agents: list[str], seed: int, cut_off: CutOffSummary | None
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
    return {
        "referees": agents,
        "verdicts": len(own),
        "mean_abs_diff_from_panel": fmean(gaps) if gaps else None,
        "humans": direct_metrics(truth, predicted, seed, clusters, "groups" if grouped else "items")
        if truth
        else None,
        "opinion_changes": _opinion_summary(sequences),
        "parroting": _parroting([ref for r in records for ref in r["referees"] if ref["agent"] in agents]),
        "cut_off": cut_off,
    }


@overload
def per_model(
    task: Literal["pairwise"],
    records: Sequence[VerdictRecord],
    agent_models: Mapping[str, str],
    seed: int,
    summarizer: str | None = None,
) -> dict[str, PairwiseModelDiagnostics]: ...
@overload
def per_model(
    task: Literal["direct"],
    records: Sequence[VerdictRecord],
    agent_models: Mapping[str, str],
    seed: int,
    summarizer: str | None = None,
) -> dict[str, DirectModelDiagnostics]: ...
def per_model(
    task: Literal["pairwise", "direct"],
    records: Sequence[VerdictRecord],
    agent_models: Mapping[str, str],
    seed: int,
    summarizer: str | None = None,
) -> dict[str, PairwiseModelDiagnostics] | dict[str, DirectModelDiagnostics]:
    """Diagnostics per model; ``agent_models`` maps referee names to their model, ``summarizer``
    is the summarizer's model (the summaries' cut-offs count for it)."""
    by_model: dict[str, list[str]] = {}
    for agent, model in agent_models.items():
        by_model.setdefault(model, []).append(agent)
    summaries = [r["cut_off"] for r in records if "cut_off" in r]
    if summarizer is not None and summaries:
        by_model.setdefault(summarizer, [])  # a model that only summarizes has its cut-offs too
    rows = _referee_rows(records)
    cut_offs = {
        model: _cut_off(
            [row for row in rows if row["agent"] in agents], summaries if model == summarizer else []
        )
        for model, agents in by_model.items()
    }
    if task == "pairwise":
        return {
            model: _pairwise_model(records, agents, seed, cut_offs[model])
            for model, agents in by_model.items()
        }
    return {
        model: _direct_model(records, agents, seed, cut_offs[model]) for model, agents in by_model.items()
    }


# More than this share of copied utterances or cut-off assessments: a degenerate panel.
DEGENERATE_SHARE = 0.5


def _share(value: float | None, of: int | None, what: str) -> str:
    """``"12.5% of 48 utterances"``; ``"-"`` when there was nothing to count."""
    return "-" if value is None else f"{100 * value:.1f}% of {of} {what}"


def _chance(value: float | None, of: int | None, reason: str | None) -> str:
    """`` (chance 3.1% of 64)``, or why there is no baseline."""
    if value is None:
        return f" (chance -: {reason or NOT_RECORDED})"
    return f" (chance {100 * value:.1f}% of {of})"


def words_copy_text(parroting: ParrotingSummary | None) -> str:
    """Utterances repeating another referee's words, next to chance; ``"-"`` when not measured.
    (Summaries of early releases lack keys: each is read with ``get``.)"""
    if parroting is None:
        return "-"
    p = parroting
    share = _share(p.get("words_copy_share"), p.get("utterances_that_saw_words"), "utterances")
    if p.get("words_copy_share") is None and p.get("words_copy_chance") is None:
        return share
    chance = _chance(p.get("words_copy_chance"), p.get("blind_words"), p.get("words_copy_chance_reason"))
    return share + chance


def verdict_copy_text(parroting: ParrotingSummary | None) -> str:
    """Verdicts equal to one their speaker saw, next to chance; ``"-"`` when not measured."""
    p = parroting
    if not p:
        return "-"
    share = _share(p.get("copy_share"), p.get("verdicts_that_saw_one"), "verdicts")
    return share + _chance(p.get("copy_chance"), p.get("blind_verdicts"), p.get("copy_chance_reason"))


def cut_off_kinds(cut_off: CutOffSummary | None) -> str:
    """``"264/320 assessments, 3/160 discussions"``: of each kind that ran, the utterances cut
    off at the token cap / all; ``"-"`` when not recorded."""
    if not cut_off:
        return "-"
    kinds = [
        f"{c['cut']}/{c['utterances']} {kind}s"
        for kind, c in (
            ("assessment", cut_off["assessment"]),
            ("discussion", cut_off["discussion"]),
            ("summary", cut_off["summary"]),
        )
        if c["utterances"]
    ]
    return ", ".join(kinds) or "no turns"


def cut_off_text(cut_off: CutOffSummary | None) -> str:
    """``"264/320 assessments, 3/160 discussions; 264/320 verdicts rest on a cut-off
    assessment"``: the turns of each kind that ended at their token cap (kinds that never ran
    left out), then the verdicts whose assessment did; ``"-"`` when not recorded."""
    if not cut_off:
        return "-"
    text, verdicts = cut_off_kinds(cut_off), cut_off["verdicts_with_assessment"]
    if verdicts:
        text += f"; {cut_off['verdicts_cut_off']}/{verdicts} verdicts rest on a cut-off assessment"
    return text


def degenerate_reasons(metrics: PanelDiagnostics) -> list[str]:
    """Why the panel looks degenerate: most of its referees' utterances repeat another
    referee's words, or most of its assessments stop at the token cap (empty: it does not, or
    the run did not measure it)."""
    reasons = []
    parroting = metrics.get("parroting")
    copied = parroting.get("words_copy_share") if parroting else None
    if parroting and copied is not None and copied > DEGENERATE_SHARE:
        chance = parroting.get("words_copy_chance")
        baseline = (
            f"chance {100 * chance:.0f}%"
            if chance is not None
            else f"chance -: {parroting.get('words_copy_chance_reason') or NOT_RECORDED}"
        )
        reasons.append(f"{100 * copied:.0f}% of referee utterances copy another referee's words ({baseline})")
    cut_off = metrics.get("cut_off")
    cut = cut_off["assessment"].get("share") if cut_off and cut_off.get("assessment") else None
    if cut is not None and cut > DEGENERATE_SHARE:
        reasons.append(f"{100 * cut:.0f}% of assessments stop at the token cap")
    return reasons
