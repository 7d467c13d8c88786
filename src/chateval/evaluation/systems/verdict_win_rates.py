"""Win rates counted by verdict, as the sources of imported verdicts count them, as a registered
table measure (chateval.evaluation.measures) at metrics.json's ``measures.verdict_win_rates``.

chateval's own win rates count one decision per comparison (both answer orders summed). Some
tools count every answer order's verdict as a game of its own, and some weigh verdicts:
Arena-Hard's win rate against its baseline counts both games of a question, a strong verdict
("A>>B") three times (arena-hard-auto's show_result.py); AlpacaEval's win rate averages each
preference's position on its 1-2 scale, its discrete win rate the verdict nearer each end (a
tie at the midpoint half). Here each system's rate against each opponent is

    sum over the verdicts of weight x score / sum of their weights,

score 1 for a verdict for the system, 0.5 for a tie, 0 against it (``win_rate``), or its
position's share of the win where it was read on a scale (``soft_win_rate``; a verdict off
the scale counts as its hard score). A comparison with a verdict the judge did not give is left
out whole (``left_out``), as Arena-Hard drops a question with a null game and AlpacaEval a NaN
preference.

The measure reads the verdict rows of an import with weights or a scale (chateval.judging.
imported: ``weight``, ``share_a``); any other run has no section. A pair is oriented against the
run's baseline (``compare: {against: X}``), else against the system its first record names A
(AlpacaEval's generator_1 and Arena-Hard's baseline, as their files name them).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chateval.core.formatting import percent
from chateval.evaluation.measures import Section, Table
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.measures import VerdictWinRate, VerdictWinRatesSection
from chateval.schema.verdicts import RefereeRow, VerdictRecord

_SCORE_A = {"A": 1.0, "tie": 0.5, "B": 0.0}


@dataclass
class _Tally:
    """One pair's verdicts from the side of ``system`` (against ``opponent``)."""

    system: str
    opponent: str
    comparisons: int = 0
    outcomes: list[tuple[float, float, float]] = field(default_factory=list)  # (weight, score, soft)
    on_scale: bool = False

    def add(self, row: RefereeRow, system_is_a: bool) -> None:
        score_a = _SCORE_A[str(row["winner"])]
        soft_a = row.get("share_a", score_a)
        self.on_scale = self.on_scale or "share_a" in row
        score, soft = (score_a, soft_a) if system_is_a else (1.0 - score_a, 1.0 - soft_a)
        self.outcomes.append((float(row.get("weight", 1.0)), score, soft))

    def row(self) -> VerdictWinRate:
        total = sum(weight for weight, _, _ in self.outcomes)
        scores = [score for _, score, _ in self.outcomes]
        return {
            "system": self.system,
            "opponent": self.opponent,
            "comparisons": self.comparisons,
            "verdicts": len(self.outcomes),
            "weight": total,
            "wins": scores.count(1.0),
            "ties": scores.count(0.5),
            "losses": scores.count(0.0),
            "win_rate": sum(weight * score for weight, score, _ in self.outcomes) / total,
            "soft_win_rate": (
                sum(weight * soft for weight, _, soft in self.outcomes) / total if self.on_scale else None
            ),
        }


def _counted(record: VerdictRecord) -> list[RefereeRow]:
    """The verdict rows a record adds: every order's, of the referees its decision kept."""
    excluded = set(record.get("excluded_referees") or [])
    return [
        row
        for order in record.get("orders") or []
        for row in order["referees"]
        if "winner" in row and not row.get("error") and row["agent"] not in excluded
    ]


def _imported_by_verdict(records: Sequence[VerdictRecord]) -> bool:
    """Whether some verdict row carries a weight or a position on a scale (module doc)."""
    return any(
        "weight" in row or "share_a" in row
        for record in records
        for order in record.get("orders") or []
        for row in order["referees"]
    )


def _verdicts_text(row: Mapping[str, Any]) -> str:
    """``8 (4 comparisons, weight 12)``: the weight said where it differs from the count."""
    weight = "" if row["weight"] == row["verdicts"] else f", weight {row['weight']:g}"
    return f"{row['verdicts']} ({row['comparisons']} comparisons{weight})"


class VerdictWinRates:
    """Each system's win rate against each opponent, counted by verdict (module doc)."""

    name = "verdict_win_rates"
    title = "win rates by verdict"
    schema = VerdictWinRatesSection

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        if settings.task != "pairwise" or not _imported_by_verdict(records):
            return None
        tallies: dict[frozenset[str], _Tally] = {}
        left_out = 0
        for record in records:
            a, b = record.get("system_a"), record.get("system_b")
            if a is None or b is None:
                continue
            if record.get("label") is None:
                left_out += 1
                continue
            pair = frozenset((a, b))
            if pair not in tallies:
                opponent = settings.baseline if settings.baseline in pair else a
                tallies[pair] = _Tally(b if opponent == a else a, opponent)
            tally = tallies[pair]
            tally.comparisons += 1
            for row in _counted(record):
                tally.add(row, system_is_a=tally.system == a)
        section: VerdictWinRatesSection = {
            "rows": [tally.row() for tally in tallies.values() if tally.outcomes],
            "left_out": left_out,
        }
        return dict(section)

    def tables(self, section: Mapping[str, Any] | None) -> list[Table]:
        if not section or not section.get("rows"):
            return []
        rows = [
            [
                row["system"],
                row["opponent"],
                _verdicts_text(row),
                f"{row['wins']}/{row['ties']}/{row['losses']}",
                percent(row["win_rate"]),
                percent(row["soft_win_rate"]),
            ]
            for row in section["rows"]
        ]
        headers = ["system", "against", "verdicts", "W/T/L", "win rate", "soft"]
        notes = [
            "Every answer order's verdict counts as a game with its weight (weight x 1 for a win, "
            "0.5 for a tie, 0 for a loss, over the weights' sum), as Arena-Hard counts its games and "
            "strong verdicts; soft: each verdict's position on its scale instead (AlpacaEval's win "
            "rate; its discrete win rate is the win rate).",
        ]
        if section.get("left_out"):
            notes.append(
                f"{section['left_out']} comparison(s) with a verdict the judge did not give left out."
            )
        return [Table("against each opponent", headers, rows, notes)]


VERDICT_WIN_RATES = VerdictWinRates()
