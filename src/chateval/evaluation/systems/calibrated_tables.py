"""The systems section's calibrated estimates as tables and sentences (chateval.evaluation.systems
.tables puts them with the others): the calibrated leaderboard and the calibrated win rates or
mean scores, each with how its intervals were made and when not to trust them."""

from collections.abc import Sequence

from chateval.core.formatting import ci_text
from chateval.evaluation.measures import Table
from chateval.evaluation.systems.label_slice import slice_text
from chateval.evaluation.systems.ppi import FEW_LABELS
from chateval.evaluation.systems.table_text import estimate_text, listed, rating_text
from chateval.schema.calibrated import BestSystem, CalibratedLeaderboard, PPIMean
from chateval.schema.run_metrics import DirectSystemsMetrics, PairwiseSystems


def calibrated_leaderboard_table(section: PairwiseSystems) -> Table | None:
    """The calibrated leaderboard with the sentences that explain it; None: the run has none and
    no reason for it (runs written before the calibrated leaderboard)."""
    # Runs written before the calibrated leaderboard have neither key: nothing to show.
    board, error = section.get("calibrated_leaderboard"), section.get("calibrated_leaderboard_error")
    if not board:
        return (
            Table("calibrated leaderboard", [], [], [f"no calibrated leaderboard: {error}"])
            if error
            else None
        )
    rows = [
        [
            str(row["rank"]),
            row["system"],
            rating_text(row["rating"], row["ci95"]),
            estimate_text(rate["estimate"], rate["ci"]) if (rate := row["field"]) else "-",
            f"{row['labelled']} of {row['comparisons']}",
            rating_text(row["panel_rating"], row["panel_ci95"]),
        ]
        for row in board["rows"]
    ]
    labels_only = (
        f"Bradley-Terry ratings ({board['scale']}, ties counted half) from the human labels of all "
        f"{board['comparisons']} comparisons; panel only: the panel's ratings."
    )
    calibrated = (
        f"prediction-powered (PPI++) estimates from the panel's {board['predictions']} verdicts on all "
        f"{board['comparisons']} comparisons, corrected by the human labels of {board['labelled']} "
        f"(lambda {board['lam']:.2f}): Bradley-Terry ratings ({board['scale']}, ties counted half) and "
        "each system's win rate against the field (ties half); panel only: the ratings uncorrected. "
        "Valid only when the labelled comparisons are a uniformly random subset of all comparisons."
    )
    notes = [
        labels_only if board.get("labels_only") else calibrated,
        _leaderboard_intervals(board),
        _best_sentence("calibrated rating", board["best"], board["rule"]),
    ]
    if board["best_field"]:
        notes.append(_best_sentence("field win rate", board["best_field"], board["rule"]))
    if board.get("labels_only"):
        notes.append(
            "every comparison is labelled: no field win rates, since nothing is left to calibrate "
            "(the pairs' human win rates are the estimate)."
        )
    if undecided := board.get("undecided"):
        notes.append(
            f"{undecided} of the {board['comparisons']} comparisons the panel did not decide (every "
            f"verdict failed), {board.get('undecided_labelled', 0)} of them labelled, are in: the panel's "
            "prediction there is a tie (0.5), and their human labels count like any other."
        )
    if (found := board.get("label_slice")) and not found["random"]:
        notes.append(
            f"warning: the labelled comparisons may not be a random slice: {slice_text(found)}. The "
            "calibrated estimates are unbiased only when the labels are drawn at random from all "
            "comparisons; on a slice confined to some pairs they lean the panel's way on the others."
        )
    if one_sided := board.get("one_sided"):
        notes.append(
            f"warning: {listed(one_sided)} won or lost every labelled comparison "
            f"{'it' if len(one_sided) == 1 else 'each'} took part in: "
            f"{'its rating rests' if len(one_sided) == 1 else 'their ratings rest'} on the prior (one "
            "tie against the anchor) and the panel, and says above or below more than how far"
            + (
                " (the anchor's own is fixed: the others' ratings against it rest on the prior)."
                if board["anchor"] in one_sided
                else "."
            )
        )
    for group in board.get("one_sided_groups", []):
        how = {
            "won": "never lost a labelled comparison to the other systems",
            "lost": "never won a labelled comparison against the other systems",
            "apart": "were never compared with the other systems in a labelled comparison",
        }[group["side"]]
        notes.append(
            f"warning: {listed(group['systems'])} {how}: the labels place them against each "
            "other, but how far the group lies from the rest rests on the prior and the panel."
        )
    few = [
        f"{row['system']} ({row['labelled']})"
        for row in board["rows"]
        if (f := row["field"]) and f.get("warning")
    ]
    if few:
        notes.append(
            f"warning: few labels: the field win rates of {', '.join(few)} rest on fewer than "
            f"{FEW_LABELS} labelled comparisons."
        )
    headers = ["rank", "system", "rating [95% CI]", "field win rate [95% CI]", "labelled", "panel only"]
    title = f"calibrated leaderboard ({board['labelled']} labelled of {board['comparisons']} comparisons)"
    return Table(title, headers, rows, notes)


def _leaderboard_intervals(board: CalibratedLeaderboard) -> str:
    if board.get("quantile") != "t":  # runs of earlier releases
        return "95% intervals: normal quantiles."
    wilson = "never narrower than the Wilson interval of all its comparisons"
    if "degrees_of_freedom" not in board:  # runs of earlier releases
        return (
            f"95% intervals: Student t quantiles with {board['labelled'] - 1} degrees of freedom "
            f"(labelled comparisons - 1); a field win rate {wilson}."
        )
    return (
        f"95% intervals: a rating's Student t with {board['degrees_of_freedom']} degrees of freedom "
        "(labelled comparisons - ratings estimated), its sandwich small-sample corrected; a field "
        f"win rate's Student t with its system's labelled comparisons - 1, {wilson}."
    )


def _best_sentence(by: str, best: BestSystem, rule: str) -> str:
    if best["resolved"]:
        return f"best by {by}: {best['system']}, resolved ({rule})."
    return (
        f"best by {by}: {best['system']}, not resolved: its interval overlaps {best['runner_up']}'s ({rule})."
    )


def calibrated_table(section: PairwiseSystems | DirectSystemsMetrics) -> Table | None:
    """The calibrated estimates of the pairs' win rates (pairwise) or the systems' mean scores
    (direct), with the pairs left out and why; None: none, and none left out."""
    found: list[tuple[str, PPIMean]]
    if section["task"] == "pairwise":
        found = [(f"{c['system_a']} vs {c['system_b']}", c) for c in section.get("calibrated") or []]
    else:
        found = [(f"{c['system']} {c['dimension']}", c) for c in section.get("calibrated") or []]
    left_out = (section.get("calibrated_left_out") or []) if section["task"] == "pairwise" else []
    said_left_out = [
        f"{p['system_a']} vs {p['system_b']} ({p['labelled']} of {p['comparisons']} labelled): {p['reason']}"
        + (f": {ci_text(rate)}." if (rate := p.get("human_win_rate")) else ".")
        for p in left_out
    ]
    if not found:
        if said_left_out:
            return Table("calibrated by human labels", [], [], ["no calibrated win rate:", *said_left_out])
        return None
    rows = []
    for what, c in found:
        gain = "-" if c.get("gain") is None else f"x{c['gain']:.2f} ({c['effective_n']:.0f} labels' worth)"
        rows.append(
            [
                what,
                f"{c['n']} + {c['N']}",
                estimate_text(c["estimate"], c["ci"]),
                estimate_text(c["classical"], c["classical_ci"]),
                f"{c['naive']:.3f}",
                f"{c['lam']:.2f}",
                gain,
            ]
        )
    pairwise = section["task"] == "pairwise"
    notes = [
        "prediction-powered (PPI++) estimates of the human "
        + ("win rate" if pairwise else "mean score")
        + ": the panel on all items, corrected by the human labels of the labelled ones; beside it "
        "the labelled items alone and the panel alone (uncorrected). n + N: labelled + panel-only items; "
        "gain: how many more labels the labelled-only estimate would need for the same interval width.",
        _calibrated_intervals([c for _, c in found], pairwise),
        *(f"warning: {what}: {c['warning']}." for what, c in found if c.get("warning")),
        *(f"not calibrated: {said}" for said in said_left_out),
    ]
    if section["task"] == "pairwise" and (
        undecided := sum(c.get("undecided", 0) for c in section["calibrated"])
    ):
        notes.append(
            f"{undecided} of the n + N comparisons the panel did not decide (every verdict failed) are "
            "in, the panel's prediction a tie (0.5); their human labels count like any other."
        )
    headers = ["estimate of", "n + N", "calibrated [95% CI]", "labelled only", "panel only", "lambda", "gain"]
    return Table("calibrated by human labels", headers, rows, notes)


def _calibrated_intervals(estimates: Sequence[PPIMean], pairwise: bool) -> str:
    if any(c.get("quantile") != "t" for c in estimates):  # runs of earlier releases
        return "95% intervals: normal quantiles."
    bounded = (
        "; a win rate's never narrower than the Wilson interval of all n + N items, as if every item "
        "were labelled"
        if pairwise
        else ""
    )
    return f"95% intervals: Student t quantiles with n - 1 degrees of freedom{bounded}."
