"""Every figure per category, as a registered table measure (chateval.evaluation.measures) at
metrics.json's ``measures.categories``: for items the data puts in categories
(``fields.category``: FairEval's and MT-Bench's ``category``, AlpacaEval's ``dataset``), each
category's items, its agreement with the humans (pairwise: accuracy and kappa; direct: the
average Spearman and Kendall), and, for runs that judged named systems, each system's record
against the field (W/T/L, win rate with ties half, hard and soft), each pair's (the same
figures), and its Davidson-Bradley-Terry rating fitted on the category's comparisons alone
(pairwise), or its mean score per dimension (direct). A run with a baseline (``compare:
{against: X}``) shows each system against the baseline instead of against the field. The
length-controlled figures and the length bias are the whole run's only: a category's few
prompts rarely estimate them (chateval.evaluation.systems.against_baseline).

The intervals are those of the whole run's figures (chateval.evaluation.agreement.intervals,
proportion_interval, davidson_intervals, direct_systems), computed on the category's items: a
category of few items gets the wide intervals few items deserve, and a rating a category's
comparisons cannot pin down is left out with the reason. Runs whose items name no category
have no section.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from chateval.core.formatting import ci_text
from chateval.evaluation.agreement.panel import direct_panel, pairwise_panel
from chateval.evaluation.measures import Section, Table
from chateval.evaluation.settings import StatisticsSettings
from chateval.evaluation.systems.davidson_intervals import INDEPENDENT
from chateval.evaluation.systems.direct_systems import ScoredResponse, direct_systems
from chateval.evaluation.systems.leaderboard import leaderboard
from chateval.evaluation.systems.proportion_interval import MIN_PROMPTS_CLUSTERED
from chateval.evaluation.systems.section import decided_comparison
from chateval.evaluation.systems.table_text import rating_text
from chateval.evaluation.systems.win_rates import win_rates
from chateval.schema.measures import CategoriesSection
from chateval.schema.verdicts import VerdictRecord


def _soft(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> bool:
    """The headline verdicts are the soft ones (asked for, and read)."""
    key = "soft_label" if settings.task == "pairwise" else "soft_scores"
    return settings.aggregation == "soft" and any(r.get(key) is not None for r in records)


def _agreement(settings: StatisticsSettings, records: Sequence[VerdictRecord], soft: bool) -> Any:
    """The panel's agreement with the humans on ``records`` (None: no human label), the
    statistic of the run's headline on the category's records."""
    if settings.task == "pairwise":
        return pairwise_panel(records, settings.seed, soft)
    return direct_panel(records, settings.seed, soft)


def _pairwise_systems(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
    comparisons = [c for r in records if "system_a" in r and (c := decided_comparison(r)) is not None]
    systems = list(dict.fromkeys(s for c in comparisons for s in (c.system_a, c.system_b)))
    if len(systems) < 2:
        return None
    baseline = settings.baseline if settings.baseline in systems else None
    # The baseline named last: every pair with it reads as the other system against it.
    order = [s for s in systems if s != baseline] + ([baseline] if baseline else [])
    found = win_rates(comparisons, order)
    rates = {row["system"]: row for row in found["overall"]}
    anchor = baseline or systems[0]
    section: Section = {"anchor": anchor, "pairs": found["pairs"]} | (
        {"baseline": baseline} if baseline else {}
    )
    try:
        board = leaderboard(comparisons, systems, anchor=anchor)
    except ValueError as exc:  # systems that never meet in this category, and the like
        return section | {"rows": list(rates.values()), "leaderboard_error": str(exc)}
    rows = []
    for row in board["rows"]:
        rate = rates[row["system"]]
        rows.append(rate | {"rank": row["rank"], "rating": row["rating"], "rating_ci95": row["ci95"]})
    method = board.get("interval_method")
    return section | {"rows": rows, "leaderboard_error": None, "interval_method": method}


def _direct_systems(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Any:
    scored = [
        ScoredResponse(str(r.get("prompt", r.get("group", r["item_id"]))), r["system"], dict(found))
        for r in records
        if "system" in r and (found := r.get("scores"))
    ]
    return direct_systems(scored, scales=settings.scales) if scored else None


class Categories:
    """Every figure per category (module doc)."""

    name = "categories"
    title = "per category"
    schema = CategoriesSection  # its section's type: the record validates it on read

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        by_category: dict[str, list[VerdictRecord]] = {}
        for record in records:
            if "category" in record:
                by_category.setdefault(record["category"], []).append(record)
        if not by_category:
            return None
        soft = _soft(settings, records)
        found = []
        for category, group in by_category.items():
            entry: Section = {"category": category, "items": len(group)}
            entry["agreement"] = _agreement(settings, group, soft)
            # The systems' figures rest on the hard decisions, as the run's systems section does.
            if settings.task == "pairwise":
                entry["systems"] = _pairwise_systems(settings, group)
            else:
                entry["systems"] = _direct_systems(settings, group)
            found.append(entry)
        return {"verdicts": "soft" if soft else "hard", "categories": found}

    def tables(self, section: Mapping[str, Any] | None) -> list[Table]:
        if not section:
            return []
        entries = section["categories"]
        tables = [_agreement_table(entries, section["verdicts"])]
        if _any_systems(entries, "rows"):
            tables += [_pairwise_systems_table(entries), _pairs_table(entries)]
        tables += [_direct_systems_table(entries)] if _any_systems(entries, "means") else []
        return [t for t in tables if t.rows]


def _any_systems(entries: Sequence[Mapping[str, Any]], key: str) -> bool:
    return any(e.get("systems") and key in e["systems"] for e in entries)


def _agreement_table(entries: Sequence[Mapping[str, Any]], verdicts: str) -> Table:
    title = f"agreement with humans per category, {verdicts} verdicts (95% CI)"
    pairwise = any(e["agreement"] and "accuracy" in e["agreement"] for e in entries)
    if pairwise:
        rows = [
            [e["category"], str(e["items"]), str(a["n"]), ci_text(a["accuracy"]), ci_text(a["kappa"])]
            if (a := e["agreement"])
            else [e["category"], str(e["items"]), "0", "-", "-"]
            for e in entries
        ]
        return Table(title, ["category", "items", "labelled n", "accuracy", "kappa"], rows)
    rows = []
    for e in entries:
        average = (e["agreement"] or {}).get("average") or {}
        rows.append(
            [
                e["category"],
                str(e["items"]),
                ci_text(average.get("spearman")),
                ci_text(average.get("kendall")),
            ]
        )
    has_any = any(e["agreement"] for e in entries)
    return Table(title, ["category", "items", "average spearman", "average kendall"], rows if has_any else [])


def baseline_pairs(systems: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """A category's pairs with the run's baseline, by the other system (empty without one): its
    record against the baseline (``CategorySystems``' doc)."""
    baseline = systems.get("baseline")
    pairs = systems.get("pairs") or []
    return {pair["system_a"]: pair for pair in pairs if baseline and pair["system_b"] == baseline}


def _system_row(
    category: str, row: Mapping[str, Any], vs: Mapping[str, Any] | None, baseline: str
) -> list[str]:
    """A system's cells: its record against the baseline (``vs``, its pair with it) in a run
    with one, else against the field; the baseline's own row has its rating only."""
    rating = rating_text(row.get("rating"), row.get("rating_ci95", ()))
    rank = str(row.get("rank", "-"))
    if row["system"] == baseline:
        return [category, rank, f"{row['system']} (baseline)", "-", "-", "-", rating]
    record = vs if baseline else row
    if record is None:  # no comparison with the baseline decided in this category
        return [category, rank, row["system"], "-", "-", "-", rating]
    wtl = f"{record['wins']}/{record['ties']}/{record['losses']}"
    soft = ci_text(record.get("soft_win_rate"))
    return [category, rank, row["system"], wtl, ci_text(record["win_rate"]), soft, rating]


def _pairwise_systems_table(entries: Sequence[Mapping[str, Any]]) -> Table:
    rows, notes, few, baselines = [], [], [], []
    for e in entries:
        found = e.get("systems")
        if not found or "rows" not in found:
            continue
        baseline = found.get("baseline", "")
        baselines += [baseline] if baseline and baseline not in baselines else []
        vs = baseline_pairs(found)
        rows += [_system_row(e["category"], row, vs.get(row["system"]), baseline) for row in found["rows"]]
        if found.get("leaderboard_error"):
            notes.append(f"{e['category']}: no ratings: {found['leaderboard_error']}")
        elif found.get("interval_method") == INDEPENDENT:
            few.append(e["category"])
    against = f"against the baseline {', '.join(baselines)}" if baselines else "against the field"
    notes.insert(
        0,
        f"W/T/L, win rate and soft win rate {against}"
        + (" (its own row: its rating)" if baselines else " (every opponent in the category)")
        + ", ties half (95% prompt-clustered intervals; exact binomial under 5 prompts; soft: from "
        "the referees' score probabilities); ratings: Davidson-Bradley-Terry, 1000 = its anchor "
        "(95% prompt-clustered intervals); all on the category's comparisons alone. The "
        "length-controlled figures and the length bias are the whole run's only (the systems "
        "judged).",
    )
    if few:
        notes.append(
            f"warning: {', '.join(few)}: fewer than {MIN_PROMPTS_CLUSTERED} prompts, so their ratings' "
            "intervals are the model's own (comparisons taken as independent): too narrow when a "
            "prompt's comparisons go together."
        )
    headers = ["category", "rank", "system", "W/T/L", "win rate", "soft win rate", "rating"]
    return Table("systems per category (hard decisions)", headers, rows, notes)


def _pairs_table(entries: Sequence[Mapping[str, Any]]) -> Table:
    """Each pair of systems within each category (those with a baseline are the systems table's
    rows already); no rows for a run scored before categories kept their pairs."""
    rows = []
    for e in entries:
        found = e.get("systems") or {}
        for pair in found.get("pairs") or []:
            if "baseline" in found and pair["system_b"] == found["baseline"]:
                continue  # a row of the systems table
            wtl = f"{pair['wins']}/{pair['ties']}/{pair['losses']}"
            rows.append(
                [
                    e["category"],
                    f"{pair['system_a']} vs {pair['system_b']}",
                    str(pair["n"]),
                    wtl,
                    ci_text(pair["win_rate"]),
                    ci_text(pair.get("soft_win_rate")),
                ]
            )
    notes = [
        "win rate of the first system named against the second, ties half, on the category's "
        "comparisons alone (95% prompt-clustered intervals; exact binomial under 5 prompts); soft: "
        "from the referees' score probabilities."
    ]
    headers = ["category", "pair", "n", "W/T/L", "win rate", "soft win rate"]
    return Table("pairs per category (hard decisions)", headers, rows, notes)


def _direct_systems_table(entries: Sequence[Mapping[str, Any]]) -> Table:
    rows = []
    for e in entries:
        found = e.get("systems")
        if not found or "means" not in found:
            continue
        for mean in found["means"]:
            rows.append(
                [e["category"], mean["system"], mean["dimension"], str(mean["n"]), ci_text(mean["mean"])]
            )
    headers = ["category", "system", "dimension", "prompts", "mean score"]
    return Table("systems per category (mean decoded score, 95% CI)", headers, rows)


CATEGORIES = Categories()
