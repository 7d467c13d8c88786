"""Per-model diagnostics of a run as rows of text, the per-model measure's table
(chateval.evaluation.diagnostics.per_model_measure): each model's agreement with the panel and
with humans, how often its referees changed their opinion, echoed the prompt, recited the item
or copied each other (the verdicts next to their chance and permutation chance), its turns cut
off at the token cap, its empty assessments, and its scores at the scale's ends or never
varying (chateval.evaluation.diagnostics.summary, in words by
chateval.evaluation.diagnostics.text)."""

from collections.abc import Mapping
from typing import NamedTuple, TypeGuard, cast

from chateval.evaluation.agreement.correlation_rows import correlation_rows
from chateval.evaluation.diagnostics.text import (
    ceiling_text,
    cut_off_text,
    empty_text,
    recitation_text,
    verdict_copy_text,
    words_copy_text,
)
from chateval.schema.diagnostics import DirectModelDiagnostics, PairwiseModelDiagnostics

PER_MODEL_COLUMNS = (
    "model",
    "referees",
    "agrees with panel",
    "vs humans",
    "changed opinion",
    "echoes the prompt",
    "recites the item",
    "copies another referee's words it saw",
    "equals a verdict it saw",
    "cut off at the token cap",
    "empty assessments",
    "scores at the scale's ends",
)


class ModelRow(NamedTuple):
    """One model's diagnostics as text cells (columns: PER_MODEL_COLUMNS)."""

    model: str
    referees: str
    with_panel: str
    vs_humans: str
    changed: str
    echo: str
    recites: str
    words: str
    copy: str
    cut: str
    empty: str
    ends: str


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _share(value: float | None, of: int | None, what: str) -> str:
    return "-" if value is None else f"{100 * value:.1f}% of {of} {what}"


def _pairwise_cells(d: PairwiseModelDiagnostics) -> tuple[str, str]:
    """(agrees with panel, vs humans) of a model of a pairwise run."""
    humans = d.get("humans")
    return _fmt(d.get("agreement_with_panel")), _fmt(humans["accuracy"]["value"]) + " acc" if humans else "-"


def _direct_cells(d: DirectModelDiagnostics) -> tuple[str, str]:
    """(agrees with panel, vs humans) of a model of a direct run; vs humans is the paper's
    average Spearman, or, when it is undefined, the defined dimensions' average, said so."""
    averages = [row for row in correlation_rows(d.get("humans")) if row.is_average]
    gap = _fmt(d.get("mean_abs_diff_from_panel")) + " gap"
    if not averages:
        return gap, "-"
    paper = averages[0].spearman
    if paper is not None and paper["value"] is not None:
        return gap, _fmt(paper["value"]) + " rho"
    defined = averages[1] if len(averages) > 1 else None
    if defined is None or defined.spearman is None or defined.spearman["value"] is None:
        return gap, "undefined rho"
    return gap, f"undefined rho ({_fmt(defined.spearman['value'])} over {', '.join(defined.covers or ())})"


def _is_pairwise(d: PairwiseModelDiagnostics | DirectModelDiagnostics) -> TypeGuard[PairwiseModelDiagnostics]:
    """A pairwise run's model (its agreement with the panel is a share of labels), not a
    direct run's (a mean score gap)."""
    return "agreement_with_panel" in d


def per_model_rows(
    section: Mapping[str, PairwiseModelDiagnostics | DirectModelDiagnostics] | None,
) -> list[ModelRow]:
    """One row per model of metrics.json's ``per_model``.

    ``vs humans`` is accuracy (pairwise) or average Spearman (direct); ``agrees with panel`` is
    the label agreement share (pairwise) or the mean absolute score gap (direct, marked ``gap``).
    Metrics of earlier releases lack the later columns' keys: those read ``-``.
    """
    rows = []
    for model, d in (section or {}).items():
        with_panel, vs_humans = (
            _pairwise_cells(d) if _is_pairwise(d) else _direct_cells(cast(DirectModelDiagnostics, d))
        )
        changes = d.get("opinion_changes")
        changed = (
            f"{_fmt(changes['changed_share'])} of {changes['referee_debates']}"
            if changes
            else "- (opinion_probes off)"
        )
        parroting = d.get("parroting")
        echo = (
            _share(parroting.get("echo_share"), parroting.get("utterances"), "utterances")
            if parroting
            else "-"
        )
        rows.append(
            ModelRow(
                model,
                ", ".join(d["referees"]) or "summarizer",
                with_panel,
                vs_humans,
                changed,
                echo,
                recitation_text(parroting),
                words_copy_text(parroting),
                verdict_copy_text(parroting),
                cut_off_text(d.get("cut_off")),
                empty_text(d.get("empty_assessments")),
                ceiling_text(d.get("ceiling")),
            )
        )
    return rows
