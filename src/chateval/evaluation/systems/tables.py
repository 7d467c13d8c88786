"""The systems section of metrics.json as tables and sentences (the systems measure's, laid out
alike by the console summary, report.md and the HTML report): a leaderboard (plain and
length-controlled side by side), win rates per pair of systems, the length bias, the calibrated
leaderboard and estimates (calibrated_tables.py); direct scoring's per-system means and paired
differences."""

from chateval.core.formatting import ci_text, signed_ci
from chateval.evaluation.measures import Table
from chateval.evaluation.settings import RESOLVED_ALPHA
from chateval.evaluation.systems.against_baseline import baseline_table
from chateval.evaluation.systems.calibrated_tables import calibrated_leaderboard_table, calibrated_table
from chateval.evaluation.systems.davidson_intervals import INDEPENDENT
from chateval.evaluation.systems.proportion_interval import MIN_PROMPTS_CLUSTERED
from chateval.evaluation.systems.table_text import listed, rating_text
from chateval.schema.run_metrics import DirectSystemsMetrics, PairwiseSystems
from chateval.schema.systems import PERCENTILE_BOOTSTRAP, Leaderboard, WinRates


def _rating_intervals(board: Leaderboard) -> str:
    """How the rating intervals were made, for this board's release."""
    method = board["interval_method"]
    if method == PERCENTILE_BOOTSTRAP:
        return f"95% intervals from {board.get('resamples')} bootstrap resamples of the prompts"
    if method == INDEPENDENT:
        return "95% intervals from the model's information (comparisons taken as independent)"
    return "95% prompt-clustered intervals (sandwich, t quantile)"


def joint_level(board: Leaderboard) -> str:
    """The confidence of the board's resolved pairs together: "95%", or an adaptive run's
    "98.75%" (the final board's share of the design's 5%: ``leaderboard.resolved_pairs``)."""
    return f"{100 * (1 - board['resolved_alpha']):g}%"


def resolved_sentence(board: Leaderboard) -> str | None:
    """Which differences of the board the data resolve, in words ("gpt-4 above vicuna-13b; no
    other difference resolved"); None for runs before release 5, which did not record them."""
    resolved = board["resolved"]
    if resolved is None:
        return None
    systems = len(board["rows"])
    pairs = systems * (systems - 1) // 2
    level = joint_level(board)
    # An adaptive run's final board shares the design's 5% with its stop's looks.
    split = (
        ""
        if board["resolved_alpha"] == RESOLVED_ALPHA
        else "; 5% split over the adaptive stop's looks and this board"
    )
    rule = (
        f"its {level} interval excludes 0{split}"
        if pairs == 1
        else f"its interval excludes 0 with all {pairs} pairs' intervals holding at once, {level} jointly "
        f"(Bonferroni{split})"
    )
    if not resolved:
        return f"resolved differences: none (a rating difference counts when {rule})."
    above: dict[str, list[str]] = {}
    for higher, lower in resolved:
        above.setdefault(higher, []).append(lower)
    said = "; ".join(f"{higher} above {listed(lower)}" for higher, lower in above.items())
    rest = "" if len(resolved) == pairs else "; no other difference resolved"
    return f"resolved differences: {said}{rest} (a rating difference counts when {rule})."


def _leaderboard(section: PairwiseSystems) -> Table | None:
    board, controlled = section.get("leaderboard"), section.get("length_controlled")
    if not board:
        error = section.get("leaderboard_error")
        return Table("leaderboard", [], [], [f"no leaderboard: {error}"]) if error else None
    by_system = {
        row["system"]: (row["rating"], row["ci95"]) for row in (controlled["rows"] if controlled else [])
    }
    rows = [
        [
            str(row["rank"]),
            row["system"],
            rating_text(row["rating"], row["ci95"]),
            rating_text(*by_system.get(row["system"], (None, ()))),
            f"{row['wins']}/{row['ties']}/{row['losses']}",
            f"{row['mean_length']:.0f}" if row["mean_length"] else "-",  # 0: no texts (imported)
        ]
        for row in board["rows"]
    ]
    notes = [
        f"Davidson-Bradley-Terry ratings, {board['scale']}; {_rating_intervals(board)}; "
        f"{board['comparisons']} panel decisions on {board['prompts']} prompts; equal ratings share "
        "a rank."
    ]
    if said := resolved_sentence(board):
        notes.append(said)
    if controlled and (said := resolved_sentence(controlled)):
        notes.append(f"length-controlled, {said}")
    if board["interval_method"] == INDEPENDENT:
        notes.append(
            f"Only {board['prompts']} prompts: too few to estimate how much a prompt's comparisons "
            f"share, so the intervals treat the comparisons as independent (at least "
            f"{MIN_PROMPTS_CLUSTERED} prompts give prompt-clustered ones)."
        )
    if controlled and controlled.get("length_coefficient"):
        gamma = controlled["length_coefficient"]
        notes.append(
            f"length-controlled: the answers' length difference as a covariate "
            f"({controlled['length_covariate']}), coefficient {signed_ci(gamma)} (positive: the "
            "panel favours the longer answer)."
        )
    bias = section["win_rates"].get("length_bias")
    if bias and bias.get("share"):
        notes.append(
            f"the longer answer won {ci_text(bias['share'])} of {bias['n']} decisive comparisons (the "
            "panel's decision over both answer orders, not a tie) between answers of different "
            f"lengths ({bias['equal_lengths']} of equal length left out)."
        )
    if section.get("undecided"):
        notes.append(
            f"{section['undecided']} comparisons undecided (every verdict failed), left out{_kept(section)}."
        )
    headers = ["rank", "system", "rating [95% CI]", "length-controlled", "W/T/L", "words"]
    return Table("leaderboard", headers, rows, notes)


def _pairs(section: PairwiseSystems) -> Table:
    rows = [
        [
            f"{p['system_a']} vs {p['system_b']}",
            str(p["n"]),
            f"{p['wins']}/{p['ties']}/{p['losses']}",
            ci_text(p["win_rate"]),
            ci_text(p["soft_win_rate"]) if p.get("soft_win_rate") else "-",
        ]
        for p in section["win_rates"]["pairs"]
    ]
    notes = [
        "win rate of the first system named, ties counted half; soft: from the referees' score "
        "probabilities.",
        *_win_rate_intervals(section["win_rates"]),
    ]
    return Table("win rates", ["pair", "n", "W/T/L", "win rate [95% CI]", "soft"], rows, notes)


def _win_rate_intervals(rates: WinRates) -> list[str]:
    """How the win rates' and the length share's intervals were computed, and a warning when
    too few prompts leave them assuming independent comparisons."""
    pairs = rates["pairs"]
    methods = [p["win_rate"].get("method") for p in pairs]
    if PERCENTILE_BOOTSTRAP in methods:
        return ["95% intervals: percentile bootstrap over prompts."]
    prompts = rates["prompts"]
    exact_only = prompts < MIN_PROMPTS_CLUSTERED and "wilson-independent" not in methods
    notes = [
        "95% exact binomial (Clopper-Pearson) intervals (win rates, and the longer answer's share), "
        "soft win rates included, each prompt one unit; an outcome's variance is bounded by that of "
        "a win or loss, so ties make them conservative."
        if exact_only
        else "95% Wilson intervals (win rates, and the longer answer's share) with a prompt-clustered "
        "design effect and a t quantile with (prompts - 1) degrees of freedom (exact binomial "
        f"intervals, each prompt one unit, for pairs on fewer than {MIN_PROMPTS_CLUSTERED} prompts); "
        "an outcome's "
        "variance is bounded by that of a win or loss, so ties make them conservative. Soft win "
        "rates: t intervals from the soft values' measured spread."
    ]
    independent = methods.count("clopper-pearson-independent") + methods.count("wilson-independent")
    if prompts < MIN_PROMPTS_CLUSTERED and not independent:
        notes.append(
            f"warning: only {prompts} prompts: each prompt counts as one unit in these intervals "
            "(its comparisons may all move together, and so few prompts cannot measure how much), "
            f"so they are wide. Judge at least {MIN_PROMPTS_CLUSTERED} prompts."
        )
    elif prompts < MIN_PROMPTS_CLUSTERED:  # runs scored before release 7
        how = "Wilson, normal quantile" if "wilson-independent" in methods else "exact binomial intervals"
        notes.append(
            f"warning: only {prompts} prompts: intervals assume comparisons are independent (no "
            f"design effect; {how}); comparisons of one prompt share its difficulty, so they may "
            f"be too narrow. Judge at least {MIN_PROMPTS_CLUSTERED} prompts."
        )
    elif independent:
        notes.append(
            f"{independent} of {len(pairs)} pairs were compared on fewer than {MIN_PROMPTS_CLUSTERED} "
            "prompts: their intervals assume comparisons are independent."
        )
    return notes


def _kept(section: PairwiseSystems) -> str:
    """Where the calibrated estimates keep the undecided comparisons (release 7 on), say so."""
    board = section.get("calibrated_leaderboard")
    if (board and "undecided" in board) or any("undecided" in c for c in section["calibrated"]):
        return (
            " of the win rates and these leaderboards; the calibrated estimates keep them, the "
            "panel's prediction a tie"
        )
    return ""


def _direct(section: DirectSystemsMetrics) -> list[Table]:
    scores = section["scores"]
    dims = scores["dimensions"]
    means = {(m["system"], m["dimension"]): m["mean"] for m in scores["means"]}
    rows = [[system, *(ci_text(means.get((system, d))) for d in dims)] for system in scores["systems"]]
    tables = [
        Table(
            "mean score per system",
            ["system", *dims],
            rows,
            [
                f"95% t intervals over the {scores['prompts']} prompts (one score per prompt, "
                "the standard error at least one scale step over the prompts; held within the scale)."
                if scores["method"] != PERCENTILE_BOOTSTRAP
                else f"95% intervals from {scores.get('resamples')} bootstrap resamples of the "
                f"{scores['prompts']} prompts."
            ],
        )
    ]
    differences = [
        [f"{d['system_a']} - {d['system_b']}", d["dimension"], str(d["n"]), signed_ci(d["difference"])]
        for d in scores["differences"]
    ]
    if differences:
        tables.append(
            Table(
                "paired differences (same prompts)",
                ["systems", "dimension", "prompts", "difference [95% CI]"],
                differences,
            )
        )
    return tables


def systems_tables(section: PairwiseSystems | DirectSystemsMetrics | None) -> list[Table]:
    """The tables of a run's systems section; empty when the run judged no named systems."""
    if not section:
        return []
    if section["task"] == "direct":
        tables = _direct(section)
    else:
        found = (
            _leaderboard(section),
            baseline_table(section.get("against_baseline")),
            _pairs(section),
            calibrated_leaderboard_table(section),
        )
        tables = [t for t in found if t is not None]
    calibrated = calibrated_table(section)
    return tables + ([calibrated] if calibrated else [])
