"""Per-model diagnostics of a panel: how each model's referees relate to the panel, to humans,
and to their own earlier opinions.

Referees are grouped by the model that speaks for them; in a homogeneous panel there is one
group. For each model:

- ``agreement_with_panel``: pairwise, the share of its referees' item labels equal to the panel
  label; direct, the mean absolute difference between its scores and the panel mean.
- ``humans``: agreement of its referees' labels (or scores) with the human ones, pooled over its
  referees (same metrics and bootstrap as the panel).
- ``opinion_changes`` (runs with ``opinion_probes``): over its referees' debates, the share whose
  final verdict differs from the verdict given before any discussion, and the mean number of
  changes along [before discussion, after round 1, ..., final].
- ``parroting``: the share of its referees' utterances that echo the prompt's instructions, and
  the share of its verdicts that repeat a verdict their speaker saw (see chateval.parroting):
  high values mean a panel that repeats instead of judging.
"""

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from chateval.metrics import direct_metrics, pairwise_metrics
from chateval.parroting import parroting_summary
from chateval.schema import RefereeRow, VerdictRecord


def _changes(sequence: Sequence[Any]) -> tuple[bool, int] | None:
    """(final differs from first, number of changes) of a verdict sequence; None if incomplete."""
    if len(sequence) < 2 or any(v is None for v in sequence):
        return None
    flips = sum(1 for before, after in zip(sequence, sequence[1:], strict=False) if before != after)
    return sequence[0] != sequence[-1], flips


def _opinion_summary(sequences: Sequence[Sequence[Any]]) -> dict[str, Any] | None:
    if not sequences:
        return None
    measured = [c for c in map(_changes, sequences) if c is not None]
    return {
        "referee_debates": len(measured),
        "changed_share": fmean(float(changed) for changed, _ in measured) if measured else None,
        "mean_changes": fmean(flips for _, flips in measured) if measured else None,
    }


def _parroting(rows: Sequence[RefereeRow]) -> dict[str, Any] | None:
    behaviours = [row["parroting"] for row in rows if "parroting" in row]
    return parroting_summary(behaviours) if behaviours else None


def _pairwise_model(records: Sequence[VerdictRecord], agents: Sequence[str], seed: int) -> dict[str, Any]:
    own = [(r, r["referee_labels"][a]) for r in records for a in agents if a in r["referee_labels"]]
    with_panel = [label == r["label"] for r, label in own if r["label"] is not None]
    labelled = [(r["human_label"], label) for r, label in own if r["human_label"] is not None]
    sequences = [
        ref["opinions"] + [ref.get("winner")]
        for r in records
        for order in r["orders"]
        for ref in order["referees"]
        if ref["agent"] in agents and "opinions" in ref
    ]
    return {
        "verdicts": len(own),
        "agreement_with_panel": fmean(with_panel) if with_panel else None,
        "humans": pairwise_metrics([t for t, _ in labelled], [p for _, p in labelled], seed)
        if labelled
        else None,
        "opinion_changes": _opinion_summary(sequences),
        "parroting": _parroting(
            [ref for r in records for o in r["orders"] for ref in o["referees"] if ref["agent"] in agents]
        ),
    }


def _direct_model(records: Sequence[VerdictRecord], agents: Sequence[str], seed: int) -> dict[str, Any]:
    own = [(r, ref) for r in records for ref in r["referees"] if ref["agent"] in agents and "scores" in ref]
    gaps = [abs(v - r["scores"][d]) for r, ref in own if r["scores"] for d, v in ref["scores"].items()]
    truth: dict[str, list[float]] = {}
    predicted: dict[str, list[float]] = {}
    for r, ref in own:
        for name, value in ref["scores"].items():
            if r["human_scores"] and name in r["human_scores"]:
                truth.setdefault(name, []).append(r["human_scores"][name])
                predicted.setdefault(name, []).append(value)
    sequences = [
        ref["opinions"] + [ref.get("scores")]
        for r in records
        for ref in r["referees"]
        if ref["agent"] in agents and "opinions" in ref
    ]
    return {
        "verdicts": len(own),
        "mean_abs_diff_from_panel": fmean(gaps) if gaps else None,
        "humans": direct_metrics(truth, predicted, seed) if truth else None,
        "opinion_changes": _opinion_summary(sequences),
        "parroting": _parroting([ref for r in records for ref in r["referees"] if ref["agent"] in agents]),
    }


def per_model(
    task: str, records: Sequence[VerdictRecord], agent_models: Mapping[str, str], seed: int
) -> dict[str, Any]:
    """Diagnostics per model; ``agent_models`` maps referee names to their model."""
    by_model: dict[str, list[str]] = {}
    for agent, model in agent_models.items():
        by_model.setdefault(model, []).append(agent)
    diagnose = _pairwise_model if task == "pairwise" else _direct_model
    return {
        model: {"referees": agents, **diagnose(records, agents, seed)} for model, agents in by_model.items()
    }


PER_MODEL_COLUMNS = (
    "model",
    "referees",
    "requests",
    "agrees with panel",
    "vs humans",
    "changed opinion",
    "echoes prompt",
    "copies a verdict",
)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def per_model_rows(metrics: Mapping[str, Any], run_info: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """One display row per model (columns: PER_MODEL_COLUMNS), for the CLI and the report.

    ``vs humans`` is accuracy (pairwise) or average Spearman (direct); ``agrees with panel`` is
    the label agreement share (pairwise) or the mean absolute score gap (direct, marked ``gap``).
    """
    rows: list[tuple[str, ...]] = []
    for model, d in metrics.get("per_model", {}).items():
        humans = d.get("humans") or {}
        if "accuracy" in humans:
            vs_humans = _fmt(humans["accuracy"]["value"]) + " acc"
        elif "average" in humans:
            vs_humans = _fmt(humans["average"]["spearman"]["value"]) + " rho"
        else:
            vs_humans = "-"
        if "agreement_with_panel" in d:
            with_panel = _fmt(d["agreement_with_panel"])
        else:
            with_panel = _fmt(d.get("mean_abs_diff_from_panel")) + " gap"
        changes = d.get("opinion_changes")
        changed = (
            f"{_fmt(changes['changed_share'])} of {changes['referee_debates']}"
            if changes
            else "- (opinion_probes off)"
        )
        requests = run_info.get("per_model", {}).get(model, {}).get("requests", "-")
        parroting = d.get("parroting") or {}
        echo = _share(parroting.get("echo_share"), parroting.get("utterances"), "utterances")
        copy = _share(parroting.get("copy_share"), parroting.get("verdicts_that_saw_one"), "verdicts")
        rows.append(
            (model, ", ".join(d["referees"]), str(requests), with_panel, vs_humans, changed, echo, copy)
        )
    return rows


def _share(value: float | None, of: int | None, what: str) -> str:
    """``"12.5% of 48 utterances"``; ``"-"`` when there was nothing to count."""
    return "-" if value is None else f"{100 * value:.1f}% of {of} {what}"
