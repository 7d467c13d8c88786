"""``chateval export --what leaderboard|pairs|categories``: the systems a run judged, and its
figures per category, as flat tables with every column a paper's table needs, read from the
run folder's metrics.json alone.

**Leaderboard**, one row per system. Pairwise: its rank and Davidson-Bradley-Terry rating with
the 95% interval, the length-controlled rank and rating beside them (the anchor's rating is
1000 by definition, its interval a point), its comparisons (wins, ties, losses), its win rate
against the field (ties half) hard and soft with intervals, its answers' mean length in words,
the systems it is resolved above (all pairs' intervals holding at once), and, where human
labels calibrated the panel, its calibrated rank, rating, field win rate and labelled
comparisons. Direct: its mean score per dimension with the interval, and the calibrated mean
where labels allow. **Pairs**, one row per pair of systems (pairwise: the win rate of the first
named, ties half, hard, soft and calibrated; direct: the paired difference per dimension).
**Categories**, one row per category and system (``category_rows``): the category's agreement
with humans, and the system's record against the field, hard and soft, its rating, and its win
rates against each opponent there (``vs.<opponent>.win_rate``; ``baseline`` names the run's
baseline, whose column holds each system's figures against it).

A column a run did not compute (no length control, no labels) is null: an empty CSV cell.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from chateval.schema.run_metrics import DirectSystemsMetrics, PairwiseSystems
from chateval.schema.systems import Leaderboard

Cell = str | int | float | bool | None  # a table's cell: a CSV field, a JSON value
Row = dict[str, Cell]


def _interval(prefix: str, found: Mapping[str, Any] | None, value: str = "value", ci: str = "ci95") -> Row:
    """``prefix``, ``prefix_low`` and ``prefix_high`` of an interval (null when absent)."""
    if not found:
        return {prefix: None, f"{prefix}_low": None, f"{prefix}_high": None}
    low, high = found.get(ci) or (None, None)
    return {prefix: found.get(value), f"{prefix}_low": low, f"{prefix}_high": high}


def _resolved_above(board: Leaderboard | None, system: str) -> str | None:
    """The systems ``system`` is resolved above, "; "-joined (null: not recorded)."""
    if board is None or board["resolved"] is None:
        return None
    return "; ".join(lower for higher, lower in board["resolved"] if higher == system)


def _board_row(board: Leaderboard | None, system: str) -> Mapping[str, Any] | None:
    return next((row for row in board["rows"] if row["system"] == system), None) if board else None


def _pairwise_leaderboard(section: PairwiseSystems) -> list[Row]:
    board, controlled = section["leaderboard"], section.get("length_controlled")
    calibrated = section.get("calibrated_leaderboard")
    against = section.get("against_baseline")
    overall = {row["system"]: row for row in section["win_rates"]["overall"]}
    ranked = [row["system"] for row in board["rows"]] if board else list(overall)
    rows = []
    for system in ranked:
        plain, lc, field = _board_row(board, system), _board_row(controlled, system), overall.get(system)
        cal = next((r for r in calibrated["rows"] if r["system"] == system), None) if calibrated else None
        row: Row = {"rank": plain["rank"] if plain else None, "system": system}
        row["anchor"] = board["anchor"] == system if board else None  # rated 1000 exactly, by definition
        row |= _interval("rating", {"value": plain["rating"], "ci95": plain["ci95"]} if plain else None)
        row["lc_rank"] = lc["rank"] if lc else None
        row |= _interval("lc_rating", {"value": lc["rating"], "ci95": lc["ci95"]} if lc else None)
        row["comparisons"] = field["n"] if field else None
        row |= {key: field[key] if field else None for key in ("wins", "ties", "losses")}
        row |= _interval("win_rate", field["win_rate"] if field else None)
        row |= _interval("soft_win_rate", field.get("soft_win_rate") if field else None)
        row["mean_words"] = (plain["mean_length"] or None) if plain else None  # 0: no texts (imported)
        row["resolved_above"] = _resolved_above(board, system)
        row["lc_resolved_above"] = _resolved_above(controlled, system)
        row["calibrated_rank"] = cal["rank"] if cal else None
        row |= _interval("calibrated_rating", {"value": cal["rating"], "ci95": cal["ci95"]} if cal else None)
        row |= _interval("calibrated_field_win_rate", cal["field"] if cal else None, "estimate", "ci")
        row["labelled"] = cal["labelled"] if cal else None
        if against is not None:  # a baseline: AlpacaEval 2's figures against it
            vs = next((r for r in against["rows"] if r["system"] == system), None)
            row |= _interval("baseline_win_rate", vs["win_rate"] if vs else None)
            row |= _interval("baseline_lc_win_rate", vs["lc_win_rate"] if vs else None)
            row["baseline_lc_not_estimable"] = vs.get("lc_reason") if vs else None
        rows.append(row)
    return rows


def _direct_leaderboard(section: DirectSystemsMetrics) -> list[Row]:
    scores = section["scores"]
    means = {(m["system"], m["dimension"]): m for m in scores["means"]}
    calibrated = {(c["system"], c["dimension"]): c for c in section["calibrated"]}
    rows = []
    for system in scores["systems"]:
        row: Row = {"system": system}
        for dimension in scores["dimensions"]:
            mean = means.get((system, dimension))
            row[f"{dimension}_n"] = mean["n"] if mean else None
            row |= _interval(dimension, mean["mean"] if mean else None)
            cal = calibrated.get((system, dimension))
            row |= _interval(f"{dimension}_calibrated", cal, "estimate", "ci")
            row[f"{dimension}_labelled"] = cal["n"] if cal else None
        rows.append(row)
    return rows


def leaderboard_rows(section: PairwiseSystems | DirectSystemsMetrics) -> list[Row]:
    """One row per system (module doc), in the leaderboard's order."""
    if section["task"] == "direct":
        return _direct_leaderboard(section)
    return _pairwise_leaderboard(section)


def _pairwise_pairs(section: PairwiseSystems) -> list[Row]:
    calibrated = {(c["system_a"], c["system_b"]): c for c in section["calibrated"]}
    rows = []
    for pair in section["win_rates"]["pairs"]:
        a, b = pair["system_a"], pair["system_b"]
        row: Row = {"system_a": a, "system_b": b}
        row |= {"comparisons": pair["n"]} | {key: pair[key] for key in ("prompts", "wins", "ties", "losses")}
        row |= _interval("win_rate", pair["win_rate"])
        row |= _interval("soft_win_rate", pair["soft_win_rate"])
        cal = calibrated.get((a, b))
        row |= _interval("calibrated_win_rate", cal, "estimate", "ci")
        row["labelled"] = cal["n"] if cal else None
        rows.append(row)
    return rows


def _direct_pairs(section: DirectSystemsMetrics) -> list[Row]:
    rows = []
    for found in section["scores"]["differences"]:
        row: Row = {key: found[key] for key in ("system_a", "system_b", "dimension", "n")}
        rows.append(row | _interval("difference", found["difference"]))
    return rows


def pair_rows(section: PairwiseSystems | DirectSystemsMetrics) -> list[Row]:
    """One row per pair of systems (pairwise) or per pair and dimension (direct)."""
    if section["task"] == "direct":
        return _direct_pairs(section)
    return _pairwise_pairs(section)


def _flipped(found: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A win rate's interval from the other system's side: 1 - rate, its ends swapped."""
    if not found or found.get("value") is None:
        return found
    low, high = found.get("ci95") or (None, None)
    ends = None if low is None or high is None else [1 - high, 1 - low]
    return {"value": 1 - found["value"], "ci95": ends}


def _opponent_cells(system: str, pairs: Sequence[Mapping[str, Any]]) -> Row:
    """``system``'s record against each opponent in the category, from its side:
    ``vs.<opponent>.comparisons``, ``.win_rate`` and ``.soft_win_rate`` with their intervals."""
    row: Row = {}
    for pair in pairs:
        if system not in (pair["system_a"], pair["system_b"]):
            continue
        first = pair["system_a"] == system
        opponent = pair["system_b"] if first else pair["system_a"]
        hard, soft = pair["win_rate"], pair.get("soft_win_rate")
        row[f"vs.{opponent}.comparisons"] = pair["n"]
        row |= _interval(f"vs.{opponent}.win_rate", hard if first else _flipped(hard))
        row |= _interval(f"vs.{opponent}.soft_win_rate", soft if first else _flipped(soft))
    return row


def category_rows(section: Mapping[str, Any], task: str) -> list[Row]:
    """One row per category, or per category and system when the run judged named systems:
    the category's items and agreement with humans (pairwise: accuracy and kappa; direct: the
    average Spearman and Kendall), then the system's W/T/L, win rate and soft win rate against
    the field and rating within the category, and its win rates against each opponent
    (``vs.<opponent>.win_rate``: a run with a baseline has its figures against it there);
    direct: its mean score per dimension, a row per dimension."""
    rows = []
    for entry in section["categories"]:
        agreement = entry.get("agreement") or {}
        base: Row = {"category": entry["category"], "items": entry["items"], "labelled": agreement.get("n")}
        if task == "pairwise":
            base |= _interval("accuracy", agreement.get("accuracy")) | _interval(
                "kappa", agreement.get("kappa")
            )
        else:
            average = agreement.get("average") or {}
            base |= _interval("spearman", average.get("spearman")) | _interval(
                "kendall", average.get("kendall")
            )
        systems = entry.get("systems") or {}
        if "rows" in systems:
            for found in systems["rows"]:
                row = base | {"system": found["system"], "rank": found.get("rank")}
                row |= {key: found[key] for key in ("wins", "ties", "losses")} | {"comparisons": found["n"]}
                row |= _interval("win_rate", found["win_rate"])
                row |= _interval("soft_win_rate", found.get("soft_win_rate"))
                rating = (
                    {"value": found["rating"], "ci95": found["rating_ci95"]} if "rating" in found else None
                )
                row |= _interval("rating", rating) | {"baseline": systems.get("baseline")}
                rows.append(row | _opponent_cells(found["system"], systems.get("pairs") or []))
        elif "means" in systems:
            for mean in systems["means"]:
                row = base | {"system": mean["system"], "dimension": mean["dimension"], "prompts": mean["n"]}
                rows.append(row | _interval("mean", mean["mean"]))
        else:
            rows.append(base)
    return rows


def systems_table(section: PairwiseSystems | DirectSystemsMetrics, what: str) -> Sequence[Row]:
    """The ``what`` ("leaderboard" or "pairs") table of a run's systems section."""
    return leaderboard_rows(section) if what == "leaderboard" else pair_rows(section)
