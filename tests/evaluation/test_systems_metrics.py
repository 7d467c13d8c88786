"""metrics.json's systems section: a scripted systems run, the soft win probability, the
calibrated estimates wired to the labelled items."""

import json
from pathlib import Path

import pytest
from rich.console import Console

from chateval.backends.scripted import ScriptedBackend
from chateval.engines.models import DEFAULT_MODEL
from chateval.evaluation.run_metrics import compute_metrics
from chateval.evaluation.systems.section import soft_win_probability
from chateval.run.runner import run
from chateval.run.statistics import statistics_settings
from chateval.schema.verdicts import VerdictRecord
from tests.support.helpers import (
    CONFIGS_DIR,
    SAMPLE_SYSTEMS,
    asks_for_scores,
    direct_responses_config,
    prompt_text,
    tiny_config,
)
from tests.support.scripted import soft_checksum_referee

SAMPLE = SAMPLE_SYSTEMS


def test_a_systems_run_reports_win_rates_and_leaderboards(systems_run: Path) -> None:
    metrics = json.loads((systems_run / "metrics.json").read_text())
    section = metrics["systems"]
    records = [json.loads(line) for line in (systems_run / "verdicts.jsonl").read_text().splitlines()]
    assert (
        section["task"] == "pairwise" and section["comparisons"] + section["undecided"] == len(records) == 12
    )
    pairs = section["win_rates"]["pairs"]
    assert len(pairs) == 3 and all(p["n"] == 4 for p in pairs)
    # The hard counts are the panel's labels, from system_a's side.
    for pair in pairs:
        mine = [r for r in records if (r["system_a"], r["system_b"]) == (pair["system_a"], pair["system_b"])]
        assert pair["wins"] == sum(r["label"] == "A" for r in mine)
        assert pair["ties"] == sum(r["label"] == "tie" for r in mine)
        assert pair["soft_win_rate"] is not None
    board = section["leaderboard"]
    assert sorted(row["system"] for row in board["rows"]) == sorted(
        {r["system_a"] for r in records} | {r["system_b"] for r in records}
    )
    assert (
        board["anchor"] == section["anchor"]
        and section["length_controlled"]["length_coefficient"] is not None
    )
    assert section["calibrated"] == []  # no human labels: nothing to calibrate
    assert section["calibrated_leaderboard"] is None
    assert section["calibrated_leaderboard_error"] is None  # no labels: nothing to say of calibration


def _record(swapped_first: dict[str, float], swapped_second: dict[str, float]) -> VerdictRecord:
    def dist(p: dict[str, float]) -> dict[str, object]:
        return {"probabilities": p, "expected": None, "entropy": None, "unmapped": 0.0, "ambiguous": 0.0}

    return {
        "item_id": "x",
        "parse_failures": 0,
        "orders": [
            {
                "swapped": False,
                "label": "A",
                "referees": [{"agent": "r", "distributions": [dist({"8": 1.0}), dist({"6": 0.5, "8": 0.5})]}],
            },
            {
                "swapped": True,
                "label": "A",
                "referees": [{"agent": "r", "distributions": [dist(swapped_first), dist(swapped_second)]}],
            },
        ],
    }  # type: ignore[typeddict-item]


def test_the_soft_win_probability_reads_both_orders_in_the_items_frame() -> None:
    # Original order: A is 8 for sure, B is 6 or 8: P(A > B) + P(equal)/2 = 0.5 + 0.25 = 0.75.
    # Swapped: shown first is B (7), second is A (9 or 5 evenly): P(A > B) = 0.5, no ties.
    record = _record({"7": 1.0}, {"9": 0.5, "5": 0.5})
    assert soft_win_probability(record) == pytest.approx((0.75 + 0.5) / 2)


def test_labels_on_some_items_give_a_calibrated_win_rate(systems_run: Path) -> None:
    from chateval.config.files import load_config

    config = load_config(CONFIGS_DIR / "systems_quickstart.yaml")
    records = [json.loads(line) for line in (systems_run / "verdicts.jsonl").read_text().splitlines()]
    pair = (records[0]["system_a"], records[0]["system_b"])
    mine = [r for r in records if (r["system_a"], r["system_b"]) == pair]
    for r, human in zip(mine[:3], ["A", "B", "A"], strict=True):  # 3 of the pair's 4 labelled
        r["human_label"] = human
    section = compute_metrics(statistics_settings(config), records)["systems"]
    (calibrated,) = section["calibrated"]
    assert (calibrated["system_a"], calibrated["system_b"]) == pair
    assert (calibrated["n"], calibrated["N"]) == (3, 1)
    assert calibrated["classical"] == pytest.approx(2 / 3)
    # A win rate: never narrower than every item labelled, within [0, 1]; and 3 labels are few.
    assert 0.0 <= calibrated["ci"][0] < calibrated["ci"][1] <= 1.0
    assert calibrated["quantile"] == "t" and calibrated["warning"].startswith("few labels: 3 labelled items")
    # Three labels calibrate one pair, but not a leaderboard: the reason is recorded.
    assert section["calibrated_leaderboard"] is None
    assert section["calibrated_leaderboard_error"] == "3 labelled comparisons; at least 10 needed"


def test_labels_spread_over_all_pairs_calibrate_a_leaderboard(systems_run: Path) -> None:
    from chateval.config.files import load_config

    config = load_config(CONFIGS_DIR / "systems_quickstart.yaml")
    records = [json.loads(line) for line in (systems_run / "verdicts.jsonl").read_text().splitlines()]
    for k, r in enumerate(records[:10]):  # humans disagree with the panel on every third item
        r["human_label"] = r["label"] if k % 3 else {"A": "B", "B": "A", "tie": "tie"}[r["label"]]
    section = compute_metrics(statistics_settings(config), records)["systems"]
    board = section["calibrated_leaderboard"]
    assert board is not None and section["calibrated_leaderboard_error"] is None
    assert (board["labelled"], board["comparisons"]) == (10, 12)
    assert board["anchor"] == section["anchor"]
    assert sorted(row["system"] for row in board["rows"]) == sorted(
        row["system"] for row in section["leaderboard"]["rows"]
    )
    assert board["best"]["system"] == board["rows"][0]["system"]
    from chateval.evaluation.systems.tables import systems_tables

    titles = [t.title for t in systems_tables(section)]
    assert "calibrated leaderboard (10 labelled of 12 comparisons)" in titles


def test_labelled_comparisons_the_panel_did_not_decide_still_calibrate(systems_run: Path) -> None:
    """Issue 64: a labelled comparison whose verdicts all failed was dropped from the calibrated
    estimates without a word. Now it stays in, the panel's prediction a tie, and the reports say so."""
    from chateval.config.files import load_config
    from chateval.evaluation.systems.tables import systems_tables

    config = load_config(CONFIGS_DIR / "systems_quickstart.yaml")
    records = [json.loads(line) for line in (systems_run / "verdicts.jsonl").read_text().splitlines()]
    for k, r in enumerate(records[:10]):
        r["human_label"] = r["label"] if k % 3 else {"A": "B", "B": "A", "tie": "tie"}[r["label"]]
    for r in (records[0], records[4]):
        r["label"] = None  # every verdict failed: undecided
    section = compute_metrics(statistics_settings(config), records)["systems"]
    assert (section["comparisons"], section["undecided"]) == (10, 2)  # the panel's own statistics
    board = section["calibrated_leaderboard"]
    assert board is not None, section["calibrated_leaderboard_error"]
    assert (board["labelled"], board["comparisons"]) == (10, 12)  # was 8 of 10
    assert (board["undecided"], board["undecided_labelled"]) == (2, 2)
    # Per pair too: records[4]'s pair counts it among its n + N, records[0]'s (every comparison
    # labelled) among the labels of its human win rate.
    pairs = {(c["system_a"], c["system_b"]): c for c in section["calibrated"]}
    undecided = pairs[(records[4]["system_a"], records[4]["system_b"])]
    assert (undecided["n"], undecided["N"], undecided["undecided"]) == (3, 1, 1)
    (whole,) = section["calibrated_left_out"]
    assert (whole["system_a"], whole["system_b"]) == (records[0]["system_a"], records[0]["system_b"])
    assert whole["labelled"] == whole["comparisons"] == 4
    notes = [note for t in systems_tables(section) for note in t.notes]
    assert (
        "2 of the 12 comparisons the panel did not decide (every verdict failed), 2 of them labelled, "
        "are in: the panel's prediction there is a tie (0.5), and their human labels count like any other."
    ) in notes
    assert (
        "2 comparisons undecided (every verdict failed), left out of the win rates and these "
        "leaderboards; the calibrated estimates keep them, the panel's prediction a tie."
    ) in notes


def test_a_fully_labelled_pair_is_listed_with_why_not_dropped(systems_run: Path) -> None:
    from chateval.config.files import load_config
    from chateval.evaluation.systems.tables import systems_tables

    config = load_config(CONFIGS_DIR / "systems_quickstart.yaml")
    records = [json.loads(line) for line in (systems_run / "verdicts.jsonl").read_text().splitlines()]
    pair = (records[0]["system_a"], records[0]["system_b"])
    for r in records:
        if (r["system_a"], r["system_b"]) == pair:
            r["human_label"] = "A"
    section = compute_metrics(statistics_settings(config), records)["systems"]
    assert section["calibrated"] == []
    (left_out,) = section["calibrated_left_out"]
    assert (left_out["system_a"], left_out["system_b"], left_out["labelled"]) == (
        *pair,
        left_out["comparisons"],
    )
    assert left_out["reason"] == "every comparison labelled: the human win rate alone is the estimate"
    assert left_out["human_win_rate"]["value"] == 1.0  # every label says A: the humans' own win rate
    (table,) = [t for t in systems_tables(section) if t.title == "calibrated by human labels"]
    assert f"{pair[0]} vs {pair[1]}" in " ".join(table.notes)


def test_every_report_shows_the_leaderboard(
    systems_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chateval.evaluation.systems.tables import systems_tables
    from chateval.reporting.html import write_html_report
    from chateval.reporting.markdown import write_report
    from chateval.reporting.measure_views import print_table

    metrics = json.loads((systems_run / "metrics.json").read_text())
    best = metrics["systems"]["leaderboard"]["rows"][0]["system"]
    for table in systems_tables(metrics["systems"]):
        print_table(Console(width=120), table)
    said = capsys.readouterr().out
    assert "leaderboard" in said and "win rates" in said and best in said
    assert "Davidson-Bradley-Terry ratings" in said
    report = write_report([systems_run], tmp_path / "md").read_text()
    assert "## Systems judged" in report and "### leaderboard" in report
    assert f"| 1 | {best} |" in report
    html = write_html_report([systems_run], tmp_path / "html").read_text()
    assert "Systems judged" in html and f"<td>{best}</td>" in html
    # The pictures come first in report.md, each a PNG beside it with its caption; the page
    # inlines the same pictures as SVG.
    assert report.index("## Systems at a glance") < report.index("## Pairwise comparison")
    for name in ("leaderboard", "win_rate_matrix", "win_rates", "referee_scores"):
        assert f"]({name}.png)" in report
        assert (tmp_path / "md" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    assert html.count('<figure class="picture"><img src="data:image/svg+xml;base64,') == 4
    # 4 prompts: too few for prompt-clustered intervals, and every report says so.
    assert metrics["systems"]["leaderboard"]["interval_method"].startswith("model-based")
    few = "Only 4 prompts: too few to estimate how much a prompt's comparisons share"
    assert few in " ".join(said.split())
    assert few in " ".join(report.split())
    assert few in html.replace("&#39;", "'")
    # The anchor's rating is fixed, not an interval [1000, 1000].
    assert all("1000 (anchor)" in text and "[1000, 1000]" not in text for text in (said, report, html))
    # No human labels: no report speaks of a calibrated leaderboard (issue 53: it read as a fault).
    assert all("calibrated leaderboard" not in text for text in (said, report, html))
    # The win rates' interval method, and a warning: 4 prompts are too few for a design effect.
    for text in (
        "95% exact binomial (Clopper-Pearson) intervals",
        "only 4 prompts: each prompt counts as one unit in these intervals",
    ):
        assert text in said and text in report and text in html


@pytest.fixture(scope="module")
def labelled_pair_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The 12 labelled quickstart items as comparisons of two named systems, scripted."""
    folder = tmp_path_factory.mktemp("labelled_pair")
    source = CONFIGS_DIR / "samples" / "quickstart_pairwise.jsonl"
    rows = [json.loads(line) | {"system_a": "x", "system_b": "y"} for line in source.read_text().splitlines()]
    data = folder / "pair.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = folder / "run"
    config = tiny_config(data={"format": "jsonl_pairwise", "path": str(data)})
    run(config, out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)})
    return data, out


def test_rescoring_with_a_quarter_of_the_labels_gives_the_calibrated_estimate(
    labelled_pair_run: tuple[Path, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from chateval.cli import app

    data, full = labelled_pair_run
    result = CliRunner().invoke(
        app, ["rescore", str(full), "--label-fraction", "0.25", "--into", str(tmp_path / "quarter")]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "quarter" / "metrics.json").read_text())
    (calibrated,) = metrics["systems"]["calibrated"]
    assert (calibrated["n"], calibrated["N"]) == (3, 9)  # 12 labelled items, a quarter kept
    assert metrics["panel"]["n"] == 3
    assert json.loads((tmp_path / "quarter" / "run.json").read_text())["name"] == "quarter"
    # The same items keep their labels as when the run itself loads a quarter of them.
    kept = {
        r["item_id"]
        for r in map(json.loads, (tmp_path / "quarter" / "verdicts.jsonl").read_text().splitlines())
        if r["human_label"]
    }
    out = tmp_path / "loaded"
    config = tiny_config(data={"format": "jsonl_pairwise", "path": str(data), "label_fraction": 0.25})
    run(config, out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)})
    loaded = {
        r["item_id"]
        for r in map(json.loads, (out / "verdicts.jsonl").read_text().splitlines())
        if r.get("human_label")
    }
    assert kept == loaded
    bad = CliRunner().invoke(app, ["rescore", str(full), "--label-fraction", "0.25"])
    assert bad.exit_code == 2 and "go together" in bad.output


def test_a_direct_run_of_systems_has_means_differences_and_calibrated_means(tmp_path: Path) -> None:
    """Two systems on four prompts; system "two" is scored higher by the panel, and three of its
    four responses carry a human score (the fourth is left for the calibrated mean)."""
    from chateval.core.backend import GenerationRequest
    from tests.support.helpers import speaker_of

    data = tmp_path / "rows.jsonl"
    rows = []
    for p in ("p1", "p2", "p3", "p4"):
        for system, human in (("one", 1), ("two", 3)):
            row = {"prompt": p, "question": f"question {p}", "system": system, "response": f"{system} on {p}"}
            if system == "two" and p != "p4":
                row["scores"] = {"fluency": human}
            rows.append(row)
    config = direct_responses_config(data, rows)

    def fluency(request: GenerationRequest) -> str:
        if not asks_for_scores(request):
            return "ok"
        high = "two on" in prompt_text(request)
        return (
            "\nFluency: 3"
            if high
            else ("\nFluency: 2" if speaker_of(request) == "Critic" else "\nFluency: 1")
        )

    result = run(config, tmp_path / "run", backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, fluency)})
    assert result.metrics is not None
    section = result.metrics["systems"]
    assert section["task"] == "direct" and section["responses"] == 8
    means = {m["system"]: m["mean"]["value"] for m in section["scores"]["means"]}
    assert means == {"one": 1.5, "two": 3.0}
    (difference,) = section["scores"]["differences"]
    assert (difference["system_a"], difference["system_b"], difference["n"]) == ("one", "two", 4)
    assert difference["difference"]["value"] == -1.5
    (calibrated,) = section["calibrated"]
    assert (calibrated["system"], calibrated["dimension"], calibrated["n"], calibrated["N"]) == (
        "two",
        "fluency",
        3,
        1,
    )
    assert calibrated["classical"] == 3.0
