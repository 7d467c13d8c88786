"""The calibrated leaderboard in the reports: its table and sentences, and run folders written
before it existed (no ``calibrated_leaderboard`` key) still render."""

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from chateval.evaluation.systems.calibrated_leaderboard import calibrated_leaderboard
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.tables import systems_tables
from chateval.record.migrations import metrics_as_today
from chateval.reporting.measure_views import markdown_table as markdown
from chateval.reporting.measure_views import print_table
from chateval.schema.calibrated import CalibratedLeaderboard
from chateval.schema.run_metrics import PairwiseSystems

# docs/results/faireval_systems_quarter_labels as release 3 wrote it (commit 1a604f6: bootstrap
# intervals); with the calibrated leaderboard's keys taken out, as an earlier release wrote it.
RESULTS_RUN = Path(__file__).resolve().parent / "old_runs" / "faireval_systems_quarter_labels"
NEW_KEYS = ("calibrated_leaderboard", "calibrated_leaderboard_error")


def _old_metrics() -> dict[str, Any]:
    metrics: dict[str, Any] = json.loads((RESULTS_RUN / "metrics.json").read_text())
    for key in NEW_KEYS:
        metrics["systems"].pop(key, None)
    return metrics


def _old_run(folder: Path) -> Path:
    """A copy of the results run as an earlier release wrote it."""
    shutil.copytree(RESULTS_RUN, folder)
    (folder / "metrics.json").write_text(json.dumps(_old_metrics()))
    return folder


def _board() -> CalibratedLeaderboard:
    """Three systems of log-strengths 0, 1, 2 on 60 prompts, a third of the comparisons labelled."""
    rng = np.random.default_rng(5)
    comparisons, human = [], []
    for prompt in range(60):
        for a, b in ((0, 1), (1, 2), (2, 0)):
            u = rng.random()
            panel = float(u < 1 / (1 + math.exp(-(a - b + 0.5))))
            comparisons.append(Comparison(f"p{prompt}", f"s{a}", f"s{b}", panel, None, 5, 5))
            human.append(float(u < 1 / (1 + math.exp(-(a - b)))) if rng.random() < 1 / 3 else None)
    return calibrated_leaderboard(comparisons, human, anchor="s0", soft=False)


def _old_section() -> PairwiseSystems:
    """The systems section of the earlier run as a reader gets it: brought to today's shape."""
    section: PairwiseSystems = metrics_as_today(_old_metrics(), "pairwise")["systems"]
    return section


def test_the_table_shows_ratings_field_win_rates_labels_and_the_best_system() -> None:
    board = _board()
    section = _old_section() | {"calibrated_leaderboard": board, "calibrated_leaderboard_error": None}
    (table,) = [t for t in systems_tables(section) if t.title.startswith("calibrated leaderboard")]
    assert (
        table.title
        == f"calibrated leaderboard ({board['labelled']} labelled of {board['comparisons']} comparisons)"
    )
    assert table.headers == [
        "rank",
        "system",
        "rating [95% CI]",
        "field win rate [95% CI]",
        "labelled",
        "panel only",
    ]
    top = board["rows"][0]
    field = top["field"]
    assert field is not None
    assert table.rows[0][:5] == [
        "1",
        top["system"],
        f"{top['rating']:.0f} [{top['ci95'][0]:.0f}, {top['ci95'][1]:.0f}]",
        f"{field['estimate']:.3f} [{field['ci'][0]:.3f}, {field['ci'][1]:.3f}]",
        f"{top['labelled']} of {top['comparisons']}",
    ]
    text = markdown(table)
    assert "PPI++" in text and "uniformly random subset" in text and "ties counted half" in text
    assert f"best by calibrated rating: {board['best']['system']}" in text
    assert "best by field win rate:" in text
    assert "overlaps no other system's" in text  # the rule is stated
    assert f"a rating's Student t with {board['degrees_of_freedom']} degrees of freedom" in text
    assert board["degrees_of_freedom"] == board["labelled"] - (len(board["rows"]) - 1)
    assert "few labels" not in text  # some 40 labels per system


def test_a_board_of_an_earlier_release_states_its_own_degrees_of_freedom() -> None:
    """Release 5 and 6 boards (t on labelled - 1, no small-sample correction) say so."""
    board = copy.deepcopy(_board())
    del board["degrees_of_freedom"]
    section = _old_section() | {"calibrated_leaderboard": board, "calibrated_leaderboard_error": None}
    (table,) = [t for t in systems_tables(section) if t.title.startswith("calibrated leaderboard")]
    text = markdown(table)
    stated = f"Student t quantiles with {board['labelled'] - 1} degrees of freedom (labelled comparisons - 1)"
    assert stated in text
    assert "small-sample" not in text


def test_field_win_rates_on_few_labels_are_named() -> None:
    board = copy.deepcopy(_board())
    row = board["rows"][1]
    assert row["field"] is not None
    row["field"]["warning"] = "few labels: ..."
    section = _old_section() | {"calibrated_leaderboard": board, "calibrated_leaderboard_error": None}
    notes = [note for t in systems_tables(section) for note in t.notes]
    assert (
        f"warning: few labels: the field win rates of {row['system']} ({row['labelled']}) rest on "
        "fewer than 10 labelled comparisons."
    ) in notes


def test_a_group_the_labels_do_not_place_is_named() -> None:
    board = copy.deepcopy(_board())
    board["one_sided_groups"] = [{"systems": ["s1", "s2"], "side": "won"}]
    section = _old_section() | {"calibrated_leaderboard": board, "calibrated_leaderboard_error": None}
    notes = [note for t in systems_tables(section) for note in t.notes]
    assert (
        "warning: s1 and s2 never lost a labelled comparison to the other systems: the labels place "
        "them against each other, but how far the group lies from the rest rests on the prior and "
        "the panel."
    ) in notes


def test_a_slice_flagged_as_not_random_and_undecided_comparisons_are_said() -> None:
    """Issue 64: the summary, report.md and the HTML (one set of notes) say when the labelled
    slice looks uneven across pairs, naming the pair, and how undecided comparisons were used."""
    board = copy.deepcopy(_board())
    board["label_slice"] = {
        "pairs": 3,
        "chi_square": 9.1,
        "p_value": 0.012,
        "draws": 10_000,
        "random": False,
        "uneven": [{"system_a": "s1", "system_b": "s2", "labelled": 3, "comparisons": 60, "expected": 20.0}],
    }
    board["undecided"], board["undecided_labelled"] = 7, 2
    section = _old_section() | {"calibrated_leaderboard": board, "calibrated_leaderboard_error": None}
    notes = [note for t in systems_tables(section) for note in t.notes]
    assert (
        "warning: the labelled comparisons may not be a random slice: the labelled share differs "
        "across the 3 pairs more than a random slice's would (exact test, p = 0.0120): s1 vs s2: 3 "
        "of 60 labelled, 20.0 expected. The calibrated estimates are unbiased only when the labels "
        "are drawn at random from all comparisons; on a slice confined to some pairs they lean the "
        "panel's way on the others."
    ) in notes
    assert any(
        note.startswith(f"7 of the {board['comparisons']} comparisons the panel did not decide")
        for note in notes
    )
    # A random slice (the board as computed) says neither.
    plain = _old_section() | {"calibrated_leaderboard": _board(), "calibrated_leaderboard_error": None}
    said = " ".join(note for t in systems_tables(plain) for note in t.notes)
    assert "random slice" not in said and "did not decide" not in said


def test_a_reason_is_shown_when_there_is_no_calibrated_leaderboard() -> None:
    section = _old_section() | {
        "calibrated_leaderboard": None,
        "calibrated_leaderboard_error": "3 labelled comparisons; at least 10 needed",
    }
    notes = [note for t in systems_tables(section) for note in t.notes]
    assert "no calibrated leaderboard: 3 labelled comparisons; at least 10 needed" in notes


def test_an_old_run_folder_still_renders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The HTML report builds its systems section from the same systems_tables (it needs the
    # transcripts this folder does not keep).
    from chateval.reporting.markdown import write_report

    tables = systems_tables(_old_section())
    assert tables and not any(t.title.startswith("calibrated leaderboard") for t in tables)
    # Its intervals are said as what they were: a bootstrap (win rates), normal (calibrated).
    notes = [note for t in tables for note in t.notes]
    assert "95% intervals: percentile bootstrap over prompts." in notes
    assert "95% intervals: normal quantiles." in notes
    assert not any(note.startswith("warning") for note in notes)
    metrics = _old_metrics()
    for table in systems_tables(metrics_as_today(copy.deepcopy(metrics), "pairwise")["systems"]):
        print_table(Console(width=120), table)
    assert "leaderboard" in capsys.readouterr().out
    report = write_report([_old_run(tmp_path / "old")], tmp_path / "md").read_text()
    assert "### leaderboard" in report and "calibrated leaderboard" not in report
    # The accuracy rests on the labelled items, not the run's: both are shown.
    panel = metrics["panel"]
    assert panel["n"] < metrics.get("items", 72)
    assert f"| {panel['n']} | {panel['accuracy']['value']:.3f}" in report
