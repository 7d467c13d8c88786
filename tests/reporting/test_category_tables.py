"""The per-category tables, export and picture (chateval.evaluation.categories): each system's
record against the field with its soft win rate, each pair's win rates, and in a run with a
baseline each system against the baseline instead; on hand-made verdict records whose counts
are known."""

from typing import Any

import pytest

from chateval.evaluation.categories import CATEGORIES, baseline_pairs
from chateval.evaluation.settings import StatisticsSettings
from chateval.reporting.export_systems import category_rows
from chateval.reporting.win_rate_plots import categories_picture
from chateval.schema.verdicts import VerdictRecord
from tests.support.systems_records import decided_record

SCALES = {"A": (1, 10), "B": (1, 10)}


def _all_pairs() -> list[VerdictRecord]:
    """Three systems on two prompts of one category: x beats y and z, y and z tie."""
    outcomes = {("x", "y"): "A", ("x", "z"): "A", ("y", "z"): "tie"}
    return [
        decided_record(k, prompt, a, b, label, "maths")
        for prompt in ("p1", "p2")
        for k, ((a, b), label) in enumerate(outcomes.items())
    ]


def _against(baseline: str) -> list[VerdictRecord]:
    """x and y each against the baseline (as B) on two prompts: x wins both, y wins one."""
    labels = {("x", "p1"): "A", ("x", "p2"): "A", ("y", "p1"): "A", ("y", "p2"): "B"}
    return [
        decided_record(k, prompt, system, baseline, label, "writing")
        for k, ((system, prompt), label) in enumerate(labels.items())
    ]


def _section(records: list[VerdictRecord], baseline: str | None = None) -> Any:
    settings = StatisticsSettings(task="pairwise", scales=SCALES, baseline=baseline)
    return CATEGORIES.compute(settings, records)


def test_a_category_keeps_each_pair_and_shows_the_soft_win_rates() -> None:
    section = _section(_all_pairs())
    (entry,) = section["categories"]
    systems = entry["systems"]
    assert "baseline" not in systems
    pairs = {(p["system_a"], p["system_b"]): p for p in systems["pairs"]}
    assert set(pairs) == {("x", "y"), ("x", "z"), ("y", "z")}
    assert (pairs["x", "y"]["wins"], pairs["y", "z"]["ties"]) == (2, 2)
    # computed rates: compared with a tolerance, never exactly
    assert pairs["x", "y"]["soft_win_rate"]["value"] == pytest.approx(1.0)
    assert pairs["y", "z"]["win_rate"]["value"] == pytest.approx(0.5)

    by_system, by_pair = CATEGORIES.tables(section)  # no human labels: no agreement table
    assert by_system.headers == ["category", "rank", "system", "W/T/L", "win rate", "soft win rate", "rating"]
    x = next(row for row in by_system.rows if row[2] == "x")
    assert x[3] == "4/0/0" and x[4].startswith("1.000 [") and x[5].startswith("1.000 [")
    assert "against the field (every opponent in the category)" in by_system.notes[0]
    assert "length-controlled figures and the length bias are the whole run's only" in by_system.notes[0]
    assert by_pair.title == "pairs per category (hard decisions)"
    assert [row[1] for row in by_pair.rows] == ["x vs y", "x vs z", "y vs z"]
    y_vs_z = by_pair.rows[2]
    assert (
        y_vs_z[2:4] == ["2", "0/2/0"] and y_vs_z[4].startswith("0.500 [") and y_vs_z[5].startswith("0.500 [")
    )


def test_a_run_with_a_baseline_shows_each_system_against_it() -> None:
    section = _section(_against("base"), baseline="base")
    (entry,) = section["categories"]
    systems = entry["systems"]
    assert systems["baseline"] == "base" and systems["anchor"] == "base"
    # Every pair with the baseline names it second: the other system's rate against it.
    assert set(baseline_pairs(systems)) == {"x", "y"}
    assert all(pair["system_b"] == "base" for pair in systems["pairs"])

    (table,) = CATEGORIES.tables(section)  # no pair is left over for a pairs table
    rows = {row[2]: row for row in table.rows}
    assert rows["base (baseline)"][3:6] == ["-", "-", "-"] and rows["base (baseline)"][6] == "1000 (anchor)"
    assert rows["x"][3] == "2/0/0" and rows["x"][4].startswith("1.000 [")
    assert (
        rows["y"][3] == "1/0/1" and rows["y"][4].startswith("0.500 [") and rows["y"][5].startswith("0.500 [")
    )
    assert "against the baseline base (its own row: its rating)" in table.notes[0]
    assert "against the field" not in table.notes[0]


def test_the_export_has_the_soft_win_rates_and_each_opponent_from_the_systems_side() -> None:
    rows = {row["system"]: row for row in category_rows(_section(_all_pairs()), "pairwise")}
    x, z = rows["x"], rows["z"]
    assert x["baseline"] is None and x["vs.y.comparisons"] == 2
    assert (x["soft_win_rate"], x["vs.y.win_rate"], x["vs.z.soft_win_rate"]) == pytest.approx((1.0, 1.0, 1.0))
    # z is the pair's second system: its rate is the pair's seen from its side, the interval mirrored.
    assert (z["vs.x.win_rate"], z["vs.y.win_rate"]) == pytest.approx((0.0, 0.5))
    assert (z["vs.x.win_rate_low"], z["vs.x.win_rate_high"]) == pytest.approx(
        (1 - x["vs.z.win_rate_high"], 1 - x["vs.z.win_rate_low"])
    )
    assert "vs.x.win_rate" not in x  # not against itself
    baseline = {row["system"]: row for row in category_rows(_section(_against("base"), "base"), "pairwise")}
    assert baseline["y"]["baseline"] == "base" and baseline["y"]["vs.base.win_rate"] == pytest.approx(0.5)
    assert (baseline["base"]["vs.y.win_rate"], baseline["base"]["vs.x.win_rate"]) == pytest.approx((0.5, 0.0))


def _title(figure: Any) -> str:
    """A figure's title, its lines (wrapped to the figure's width) joined."""
    return " ".join(figure.get_suptitle().split())


def test_the_category_picture_says_against_whom() -> None:
    field = categories_picture(_section(_all_pairs()), ["x", "y", "z"], "category_win_rates", "")
    assert field is not None
    assert _title(field.figure) == "Win rate per category against the field"
    assert "against the field (every opponent)" in field.caption
    picture = categories_picture(_section(_against("base"), "base"), ["base", "x", "y"], "c", "")
    assert picture is not None
    assert _title(picture.figure) == "Win rate per category against the baseline base"
    assert "against the baseline base on the category's comparisons" in picture.caption
    ticks = [t.get_text() for t in picture.figure.get_axes()[0].get_yticklabels()]
    assert ticks == ["x", "y"]  # the baseline has no rate against itself
