"""Plain-words lines for the statistics that keep a report honest, shared by the CLI summary,
report.md and the HTML report: position consistency over decisive items, the reference
baselines (and a panel below them), and whether the debate beat its referees' blind vote.

Each reads metrics.json as written by any release: a key an older run lacks gives ``None`` or
``-``, never an error.
"""

from collections.abc import Mapping
from typing import Any

from chateval.reporting.formatting import ci_text, signed_ci


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def reading(difference: Mapping[str, Any], p_value: float | None = None) -> str:
    """Plain words for a paired difference: does the data support a gap?"""
    if difference.get("value") is None:
        return "undefined"
    if difference.get("ci95") is None:
        return "no interval"
    low, high = difference["ci95"]
    excludes_zero = low > 0 or high < 0
    if p_value is not None and (p_value < 0.05) != excludes_zero:
        return "borderline (the tests disagree)"
    return "more than noise" if excludes_zero else "within noise"


def position_text(position: Mapping[str, Any] | None) -> str | None:
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
    ties = f"{position['tie_in_both_orders']} of {both} tie in both orders"
    if not decisive:
        return f"no item decisive in either order; {ties}"
    same, flips = position["decisive_consistency"], position["decisive_flip_share"]
    # The rest of the decisive items have a winner in one order and a tie in the other.
    one_order = None if same is None or flips is None else max(0.0, 1.0 - same - flips)
    return (
        f"{_pct(same)} of {decisive} items decisive in either order "
        f"(winner flips in {_pct(flips)}, a tie in the other order in {_pct(one_order)}); {ties}"
    )


def baselines_text(baselines: Mapping[str, Any] | None) -> str:
    """Pairwise: ``always "A" 0.512, majority label (A) 0.512, random label 0.333 (expected)``
    (accuracy); direct: the response-length predictor's average Spearman, or why it is absent."""
    if not baselines:
        return "-"
    if "always_A" in baselines:
        majority = baselines["majority"]
        return (
            f'always "A" {baselines["always_A"]["accuracy"]:.3f}, majority label ({majority["label"]}) '
            f"{majority['accuracy']:.3f}, random label {baselines['random']['accuracy']:.3f} (expected)"
        )
    length = baselines.get("response_length")
    if length is None:
        return f"response length: {baselines.get('response_length_unavailable', '-')}"
    average = (length.get("average") or {}).get("spearman")
    return f"response length in words, average rho {ci_text(average)}; a constant predictor: undefined"


def below_baselines(metrics: Mapping[str, Any]) -> str | None:
    """One line when the panel does no better than a reference baseline (None otherwise):
    pairwise accuracy below always "A", the majority label or a random label; direct average
    Spearman below the response length's."""
    panel, baselines = metrics.get("panel") or {}, metrics.get("baselines") or {}
    if "accuracy" in panel and "always_A" in baselines:
        value = panel["accuracy"]["value"]
        majority = baselines["majority"]
        named = {
            'always "A"': baselines["always_A"]["accuracy"],
            f"the majority label ({majority['label']})": majority["accuracy"],
            "a random label (expected)": baselines["random"]["accuracy"],
        }
        below = [f"{name} {score:.3f}" for name, score in named.items() if value < score]
        if below:
            return f"the panel's accuracy {value:.3f} is below " + ", ".join(below)
        return None
    ours = _average_rho(panel)
    length = _average_rho(baselines.get("response_length"))
    if ours is not None and length is not None and ours < length:
        return f"the panel's average Spearman {ours:.3f} is below the response length's {length:.3f}"
    return None


def _average_rho(direct: Mapping[str, Any] | None) -> float | None:
    """The average Spearman of direct metrics; None when absent or undefined."""
    value: float | None = (((direct or {}).get("average") or {}).get("spearman") or {}).get("value")
    return value


def debate_effect_text(metrics: Mapping[str, Any], agents: int) -> str | None:
    """One line answering "does the debate help?" (None for a single referee without probes)."""
    effect = metrics.get("debate_effect")
    if effect is None:
        return "not measured: opinion probes off (opinion_probes: true)" if agents > 1 else None
    if "unavailable" in effect:
        return f"not measured: {effect['unavailable']}"
    changed = f"the discussion changed {effect['changed']} of {effect['items']} decisions"
    left_out = f" ({effect['left_out']} items without both left out)" if effect["left_out"] else ""
    found = effect.get("comparison")
    if not found:
        return changed + left_out + "; no human labels to compare with"
    if "accuracy" in found:
        accuracy, mcnemar = found["accuracy"], found["mcnemar"]
        return (
            f"accuracy blind {accuracy['blind']:.3f}, final {accuracy['final']:.3f} on {found['n']} items, "
            f"final minus blind {signed_ci(accuracy['difference'])}; {changed}{left_out}; only blind "
            f"right {mcnemar['blind_only_right']}, only final right {mcnemar['final_only_right']}, "
            f"McNemar p = {mcnemar['p_value']:.3f}: {reading(accuracy['difference'], mcnemar['p_value'])}"
        )
    spearman = (found.get("average") or {}).get("spearman")
    if not spearman:
        return changed + left_out + "; no dimension's correlation is defined"
    blind, final = (
        "undefined" if spearman[side] is None else f"{spearman[side]:.3f}" for side in ("blind", "final")
    )
    return (
        f"average rho blind {blind}, final {final} on {found['n']} items, final minus blind "
        f"{signed_ci(spearman['difference'])}; {changed}{left_out}: {reading(spearman['difference'])}"
    )
