"""Plain-words lines for the statistics that keep a report honest, shared by the CLI summary,
report.md and the HTML report: position consistency over decisive items, the reference
baselines (and a panel below them), whether the debate beat its referees' blind vote, and
what an adaptive run chose to compare.

Each reads metrics.json as written by any release: a key an older run lacks gives ``None`` or
``-``, never an error.
"""

from chateval.core.schema.metrics import (
    BlindFinalDirect,
    BlindFinalPairwise,
    CorrelationInterval,
    Interval,
    PositionStats,
)
from chateval.core.schema.records import AdaptiveInfo
from chateval.reporting.formatting import ci_text, signed_ci
from chateval.reporting.metrics_view import SIDES, DirectView, MetricsView, PairwiseView


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def reading(difference: Interval | CorrelationInterval, p_value: float | None = None) -> str:
    """Plain words for a paired difference: does the data support a gap?"""
    if difference.get("value") is None:
        return "undefined"
    interval = difference.get("ci95")
    if interval is None:
        return "no interval"
    low, high = interval
    excludes_zero = low > 0 or high < 0
    if p_value is not None and (p_value < 0.05) != excludes_zero:
        return "borderline (the tests disagree)"
    return "more than noise" if excludes_zero else "within noise"


def position_text(position: PositionStats | None) -> str | None:
    """``"0.0% of 5 items decisive in either order (winner flips in 40.0%, a tie in the other
    order in 60.0%); 75 of 80 tie in both orders"``.

    A run of an earlier release has only the old all-items ``consistency`` (tie/tie counted
    as agreement): it is shown as such, so that it is not read as the decisive-item figure.
    """
    if not position or not position.get("items_in_both_orders"):
        return None
    if "decisive_items" not in position:
        old = position.get("consistency")
        return None if old is None else f"{_pct(old)} of all items (tie/tie counted as agreement; rescore)"
    both, decisive = position["items_in_both_orders"], position["decisive_items"]
    ties = f"{position.get('tie_in_both_orders')} of {both} tie in both orders"
    if not decisive:
        return f"no item decisive in either order; {ties}"
    same, flips = position.get("decisive_consistency"), position.get("decisive_flip_share")
    # The rest of the decisive items have a winner in one order and a tie in the other.
    one_order = None if same is None or flips is None else max(0.0, 1.0 - same - flips)
    return (
        f"{_pct(same)} of {decisive} items decisive in either order "
        f"(winner flips in {_pct(flips)}, a tie in the other order in {_pct(one_order)}); {ties}"
    )


def baselines_text(view: MetricsView) -> str:
    """Pairwise: ``always "A" 0.512, majority label (A) 0.512, random label 0.333 (expected)``
    (accuracy); direct: the response-length predictor's average Spearman, or why it is absent."""
    if isinstance(view, PairwiseView):
        rows = view.baseline_rows
        named = [f"{r.name} {r.accuracy:.3f}" + (" (expected)" if r.expected else "") for r in rows]
        return ", ".join(named) or "-"
    baselines = view.metrics.get("baselines")
    if not baselines:
        return "-"
    length = baselines.get("response_length")
    if length is None:
        return f"response length: {baselines.get('response_length_unavailable', '-')}"
    average = length.get("average")
    spearman = average.get("spearman") if average else None
    return f"response length in words, average rho {ci_text(spearman)}; a constant predictor: undefined"


def below_baselines(view: MetricsView) -> str | None:
    """One line when the panel does no better than a reference baseline (None otherwise):
    pairwise accuracy below always "A", the majority label or a random label; direct average
    Spearman below the response length's."""
    if isinstance(view, PairwiseView):
        panel = view.panel
        if not panel or not view.baseline_rows:
            return None
        value = panel["accuracy"]["value"]
        below = [f"{r.phrase} {r.accuracy:.3f}" for r in view.baseline_rows if value < r.accuracy]
        return f"the panel's accuracy {value:.3f} is below " + ", ".join(below) if below else None
    ours = _average_rho(view)
    length = next((r.spearman for r in view.length_rows if r.name == "average"), None)
    theirs = length["value"] if length else None
    if ours is not None and theirs is not None and ours < theirs:
        return f"the panel's average Spearman {ours:.3f} is below the response length's {theirs:.3f}"
    return None


def _average_rho(view: DirectView) -> float | None:
    """The panel's average Spearman; None when absent or undefined."""
    average = view.panel.get("average") if view.panel else None
    spearman = average.get("spearman") if average else None
    return spearman["value"] if spearman else None


def debate_effect_text(view: MetricsView, agents: int) -> str | None:
    """One line answering "does the debate help?" (None for a single referee without probes)."""
    effect = view.metrics.get("debate_effect")
    if effect is None:
        return "not measured: opinion probes off (opinion_probes: true)" if agents > 1 else None
    if "unavailable" in effect:
        return f"not measured: {effect['unavailable']}"
    said = f"the discussion changed {effect['changed']} of {effect['items']} decisions"
    said += f" ({effect['left_out']} items without both left out)" if effect["left_out"] else ""
    if isinstance(view, PairwiseView):
        return _pairwise_effect(view.blind_vs_final, said)
    return _direct_effect(view.blind_vs_final, said)


def _pairwise_effect(found: BlindFinalPairwise | None, changed: str) -> str:
    if not found:
        return changed + "; no human labels to compare with"
    accuracy, mcnemar = found["accuracy"], found["mcnemar"]
    return (
        f"accuracy blind {accuracy['blind']:.3f}, final {accuracy['final']:.3f} on {found['n']} items, "
        f"final minus blind {signed_ci(accuracy['difference'])}; {changed}; only blind "
        f"right {mcnemar['blind_only_right']}, only final right {mcnemar['final_only_right']}, "
        f"McNemar p = {mcnemar['p_value']:.3f}: {reading(accuracy['difference'], mcnemar['p_value'])}"
    )


def _direct_effect(found: BlindFinalDirect | None, changed: str) -> str:
    if not found:
        return changed + "; no human labels to compare with"
    average = found.get("average")
    spearman = average.get("spearman") if average else None
    if not spearman:
        return changed + "; no dimension's correlation is defined"
    blind, final = ("undefined" if spearman[side] is None else f"{spearman[side]:.3f}" for side in SIDES)
    return (
        f"average rho blind {blind}, final {final} on {found['n']} items, final minus blind "
        f"{signed_ci(spearman['difference'])}; {changed}: {reading(spearman['difference'])}"
    )


def adaptive_text(adaptive: AdaptiveInfo) -> str:
    """What a run with the adaptive design chose, in one line."""
    waves = adaptive["waves"]
    return (
        f"adaptive design: {adaptive['chosen']} of {adaptive['candidates']} candidate comparisons "
        f"in {waves} wave{'' if waves == 1 else 's'}; stopped: {adaptive['stop'] or 'not yet'}"
    )
