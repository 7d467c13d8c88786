"""Imported runs read like imported runs (chateval.reporting.imported_runs): the console summary,
report.md and report.html of the import recipes' samples (configs/import) show no rows of "-"
for what one judge without a debate cannot have, call a skipped verdict skipped, title
objective labels as labels; labels naming a system no verdict judged are refused, naming it.
`chateval compare` counts the items each side lacks and warns when both sides are one run.
The newer kinds read right too: a direct import (MT-Bench single grading) counts answers, not
comparisons; ChatEval 2023's replies that did not parse are ties by its rule, not skipped; its
scores and assessments are shown as such; a line or section that measured nothing for an import
(no labels, no probes, no cost) is left out. No model runs: imports only."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from chateval.cli import app
from chateval.errors import DataError
from chateval.reporting.html import write_html_report
from chateval.reporting.html_imported import settings_keys
from chateval.reporting.html_views import build_report
from chateval.reporting.markdown import write_report
from chateval.reporting.markdown_direct import direct_table
from chateval.reporting.summary import print_summary
from chateval.run.finished import load_finished_run
from chateval.run.import_any import import_any
from chateval.run.importing import import_run
from chateval.run.runner import RunResult
from tests.support.helpers import CONFIGS_DIR, read_jsonl

MT_BENCH = CONFIGS_DIR / "import" / "mt_bench_pairwise.yaml"  # human labels, one 'error' skipped
GENERIC = CONFIGS_DIR / "import" / "generic_pairwise.yaml"  # objective labels, no texts
SINGLE = CONFIGS_DIR / "import" / "mt_bench_single.yaml"  # direct scores, one '-1' skipped, no labels
CHATEVAL_2023 = CONFIGS_DIR / "import" / "chateval_2023.yaml"  # two referees' scores, 2 replies unparsed
ALPACA = CONFIGS_DIR / "import" / "alpaca_eval.yaml"  # one answer order, preferences on a scale, no labels
ARENA = CONFIGS_DIR / "import" / "arena_hard.yaml"  # weighted strong verdicts, no labels
WIDE = {"COLUMNS": "200"}  # the console's tables on one line each
runner = CliRunner()

# What a debate's diagnostics say when a run measured nothing: never in an imported run's reports.
DEBATE_ONLY = (
    "by model",
    "per-model diagnostics",
    "scores at the scale's ends",
    "recites the item",
    "cut off at the token cap",
    "empty assessments",
    "referees unanimous",
    "the debate's effect",
    "changed opinion",
    "Per-referee agreement",
)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both recipes' samples imported."""
    root = tmp_path_factory.mktemp("imported")
    recipes = (("mt", MT_BENCH), ("gen", GENERIC))
    return {name: import_run(config, root / name).outdir for name, config in recipes}


def _config_copy(tmp_path: Path, source: Path, **changes: Any) -> Path:
    """``source`` (an import recipe) with its file paths absolute and ``changes`` applied, in
    ``tmp_path``."""

    def absolute(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: str((source.parent / value).resolve())
                if key == "path" and isinstance(value, str)
                else absolute(value)
                for key, value in node.items()
            }
        return node

    tree = absolute(yaml.safe_load(source.read_text(encoding="utf-8")))
    for key, value in changes.items():
        section, _, field = key.partition(".")
        if field:
            tree[section][field] = value
        else:
            tree[section] = value
    config = tmp_path / "import.yaml"
    config.write_text(yaml.safe_dump(tree), encoding="utf-8")
    return config


def test_the_summary_of_an_import_shows_what_it_has(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", str(MT_BENCH), "-o", str(tmp_path / "mt")], env=WIDE)
    assert result.exit_code == 0, result.output
    said = result.output
    # 18 comparisons, one of whose verdicts was MT-Bench's "error", mapped to skip.
    assert "items scored: 17 of 18 (the others had their verdicts skipped: 1 'error'" in said
    assert "parse failures" not in said and "soft verdicts" not in said
    assert "agreement with human labels (95% CI)" in said
    for absent in DEBATE_ONLY:
        assert absent not in said, absent
    result = runner.invoke(app, ["import", str(GENERIC), "-o", str(tmp_path / "gen")], env=WIDE)
    assert result.exit_code == 0, result.output
    # Objective labels (JudgeBench-style A>B / B>A): labels, never human ones.
    assert "agreement with labels (95% CI)" in result.output
    assert "calibrated leaderboard" in result.output and "human label" not in result.output
    # No texts, no lengths: the leaderboard's columns that measured nothing are left out.
    assert "leaderboard" in result.output and "length-controlled" not in result.output


def test_report_md_of_an_import(imported: dict[str, Path], tmp_path: Path) -> None:
    report = write_report([imported["mt"]], tmp_path / "mt").read_text(encoding="utf-8")
    assert "mt_bench_pairwise: imported from " in report and "no model ran" in report
    assert "## Pairwise comparison (accuracy and Cohen's kappa vs human labels)" in report
    rows = [line for line in report.splitlines() if line.startswith("| mt_bench_pairwise | imported |")]
    assert rows and rows[0].endswith("| 1 skipped (1 'error') |"), rows
    assert "| verdicts skipped |" in report and "| parse failures |" not in report
    assert "| mt_bench_pairwise | soft |" not in report  # no setting to say "off"
    for absent in DEBATE_ONLY:
        assert absent not in report, absent

    report = write_report([imported["gen"]], tmp_path / "gen").read_text(encoding="utf-8")
    assert "## Pairwise comparison (accuracy and Cohen's kappa vs labels)" in report
    assert "### calibrated by labels" in report and "human" not in report
    assert "labels 12 comparisons, objective" in report


def test_report_html_of_an_import(imported: dict[str, Path], tmp_path: Path) -> None:
    report = build_report([load_finished_run(imported["mt"])])
    (run,) = report.runs
    assert run.settings["verdicts skipped"] == "1 'error'"
    for absent in ("extras", "sampling", "parse failures", "panel looks degenerate", *DEBATE_ONLY):
        assert absent not in run.settings, absent
    assert report.settings_keys == list(run.settings)
    # One judge, no debate: its verdict and what was skipped, nothing a debate would add.
    assert run.columns == ["panel", "correct", "orders agree", "skipped"]
    assert [label for _, label in report.filters] == ["wrong", "position-inconsistent", "skipped verdicts"]
    failed = next(item for item in report.items if item.id == "84:steady-vs-terse")
    outcome = failed.outcomes[0]
    assert outcome is not None and outcome.cells[-1] == "1"
    assert outcome.decision.endswith("Left out (a verdict skipped): sample-judge.")
    assert [d.columns for d in failed.debates] == [["winner"], ["winner"]]
    assert [r.cells for d in failed.debates for r in d.referees] == [["A"], [""]]
    assert (report.labels, report.item_columns) == ("human labels", ["question", "human"])

    page = write_html_report([imported["gen"]], tmp_path / "gen").read_text(encoding="utf-8")
    assert "<h2>Agreement with labels</h2>" in page and "Hard: the imported verdicts." in page
    assert "<th>label</th>" in page and " · label: A</h2>" in page
    assert "imported without its texts" in page
    for absent in ("each referee&#39;s agreement", "by model", "referees disagreeing", "<th>human</th>"):
        assert absent not in page, absent


def test_settings_rows_follow_a_run_that_debated() -> None:
    """Side by side, a debated run's settings give the rows' order; an imported run's own
    rows (what it skipped) follow."""
    debated = {"task": "pairwise", "extras": "none", "parse failures": "0", "release": "x"}
    imported = {"task": "pairwise", "verdicts skipped": "none", "release": "x"}
    rows = ["task", "extras", "parse failures", "release", "verdicts skipped"]
    assert settings_keys([imported, debated]) == rows


def test_labels_naming_a_system_no_verdict_judged_are_refused(tmp_path: Path) -> None:
    labels = tmp_path / "human_judgments.jsonl"
    sample = (CONFIGS_DIR / "samples" / "mt_bench" / "human_judgments.jsonl").read_text(encoding="utf-8")
    lines = sample.splitlines()
    bad = {"question_id": 82, "model_a": "shouty", "model_b": "steady", "winner": "model_a", "turn": 1}
    labels.write_text("\n".join([*lines, json.dumps(bad | {"judge": "expert_9"})]) + "\n", encoding="utf-8")
    config = _config_copy(tmp_path, MT_BENCH, **{"labels.path": str(labels)})
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        import_run(config, out)
    message = str(caught.value)
    assert message.startswith(f"{labels}:{len(lines) + 1}: field 'model_a': system 'shouty' "), message
    assert "judged by no imported verdict" in message and not out.exists()
    result = runner.invoke(app, ["import", str(config), "-o", str(out)])
    assert result.exit_code == 2 and "system 'shouty'" in result.output and not out.exists()


def test_compare_counts_what_each_side_lacks_and_warns_of_one_run(
    imported: dict[str, Path], tmp_path: Path
) -> None:
    # The generic recipe's judge on its first 9 comparisons only.
    source = CONFIGS_DIR / "samples" / "judgments" / "pairwise_verdicts.jsonl"
    part = tmp_path / "part.jsonl"
    first_nine = source.read_text(encoding="utf-8").splitlines(keepends=True)[:9]
    part.write_text("".join(first_nine), encoding="utf-8")
    config = _config_copy(tmp_path, GENERIC, name="part", **{"judgments.path": str(part)})
    fewer = import_run(config, tmp_path / "part").outdir
    whole = {r["item_id"] for r in read_jsonl(imported["gen"] / "verdicts.jsonl")}
    some = {r["item_id"] for r in read_jsonl(fewer / "verdicts.jsonl")}
    only_whole, only_part = len(whole - some), len(some - whole)
    assert (len(whole & some), only_whole, only_part) == (9, 3, 0)

    out = tmp_path / "cmp"
    result = runner.invoke(app, ["compare", str(imported["gen"]), str(fewer), "-o", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    compared = (out / "compare.md").read_text(encoding="utf-8")
    assert "| only A judged | only B judged |" in compared
    row = next(line for line in compared.splitlines() if line.startswith("| generic_pairwise | part |"))
    assert row.startswith("| generic_pairwise | part | 9 | 9 |")
    assert row.endswith(f"| {only_whole} | {only_part} |")
    assert "warning" not in result.output
    assert "## each against the labels, same items (paired)" in compared  # objective labels

    # The same folder twice, and a copy of it (the same started_at and verdicts): one run.
    copy = tmp_path / "copy"
    shutil.copytree(imported["gen"], copy)
    for other, says in ((imported["gen"], "are the same run folder"), (copy, "are the same run (a copy")):
        result = runner.invoke(app, ["compare", str(imported["gen"]), str(other)], env=WIDE)
        assert result.exit_code == 0, result.output
        assert f"warning: {imported['gen']} and {other} {says}" in " ".join(result.output.split())


@pytest.fixture(scope="module")
def newer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    """The newer kinds' recipes imported: direct scores, ChatEval 2023's outputs, AlpacaEval's
    and Arena-Hard's annotations."""
    root = tmp_path_factory.mktemp("newer")
    recipes = (("single", SINGLE), ("2023", CHATEVAL_2023), ("alpaca", ALPACA), ("arena", ARENA))
    return {name: import_any(config, root / name) for name, config in recipes}


def _summary(result: RunResult, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The console summary ``chateval import`` prints of ``result``, its tables on one line each."""
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    print_summary(result)
    return capsys.readouterr().out


def test_the_summary_of_the_newer_imports_reads_as_theirs(
    newer: dict[str, RunResult], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    said = _summary(newer["single"], capsys, monkeypatch)
    # Direct scores: answers judged, not comparisons; no answer orders to tell.
    assert "│ answers judged   │ 18 of the file's 36 records" in said
    assert "comparisons" not in said and "answer orders" not in said
    # The imported judge's own scores at the scale's ends measure it: kept (3 of 17 are a 10).
    assert "scores at the scale's ends: 17.6% of 17 verdicts every score at the top" in said

    said = _summary(newer["2023"], capsys, monkeypatch)
    # Replies that did not parse are ties by the 2023 rule, not skipped verdicts.
    assert "│ verdicts          │ 2 did not parse: their items ties, the 2023 rule" in said
    assert "verdicts skipped" not in said
    # Its referees wrote assessments: counted, in words (no key name, no "earlier release").
    assert "│ empty assessments │ 0/22 verdicts' own (an import holds no other assessments)" in said
    assert "empty_assessments" not in said and "release" not in said
    # Without opinion probes no debate's effect to measure: no line (nor advice to set a key).
    assert "the debate's effect" not in said and "opinion_probes" not in said
    # The per-model block shows what it measured; the legend of its parroting columns went with them.
    assert "by model:" in said and "echoes:" not in said and "copying:" not in said

    said = _summary(newer["alpaca"], capsys, monkeypatch)
    # No labels: no accuracy to count skipped items in, and no JudgeBench score to call unavailable.
    assert "items scored: 11 of 12 (the others had their verdicts skipped: 1 'null')\n" in said
    assert "JudgeBench score" not in said
    # A comparison without a verdict was skipped, not failed.
    assert "1 comparisons undecided (every verdict skipped), left out." in said
    said = _summary(newer["arena"], capsys, monkeypatch)
    assert "JudgeBench score" not in said and "label naming a winner" not in said


def test_report_md_of_the_newer_imports(newer: dict[str, RunResult], tmp_path: Path) -> None:
    folders = {name: result.outdir for name, result in newer.items()}
    report = write_report([folders["2023"]], tmp_path / "2023").read_text(encoding="utf-8")
    row = next(line for line in report.splitlines() if line.startswith("| chateval_2023 | imported |"))
    assert row.endswith("| 2 verdicts did not parse: their items ties, the 2023 rule |"), row
    assert "skipped (none)" not in report
    assert "- chateval_2023: empty assessments: 0/22 verdicts' own (an import holds no other" in report
    assert "The debate's effect" not in report and "echoes:" not in report
    assert "## Cost" not in report  # no model ran: nothing to cost

    report = write_report([folders["single"]], tmp_path / "single").read_text(encoding="utf-8")
    assert "answers judged 18 of the file's 36 records" in report
    # No human scores: no table of correlations that are all "-".
    assert "## Direct scoring" not in report and "## Cost" not in report
    assert "- mt_bench_single: scores at the scale's ends: 17.6% of 17 verdicts" in report
    # Where the table is shown its header, rule and rows have as many cells.
    table = direct_table([load_finished_run(folders["single"])]).splitlines()
    assert [line.count("|") for line in table] == [9, 9, 9], table  # 8 cells each
    assert table[0].endswith("| labelled | verdicts skipped |")

    report = write_report([folders["alpaca"]], tmp_path / "alpaca").read_text(encoding="utf-8")
    assert "## Pairwise comparison (no labels: no accuracy or kappa)" in report
    assert "JudgeBench score" not in report and "human labels" not in report


def test_report_html_of_the_newer_imports(newer: dict[str, RunResult]) -> None:
    runs = {name: load_finished_run(result.outdir) for name, result in newer.items()}
    report = build_report([runs["2023"]])
    (run,) = report.runs
    # ChatEval 2023's verdicts are scores: said so, and shown beside each referee's winner.
    assert run.settings["verdict"] == "scores 1-10 per answer (imported)"
    assert run.settings["verdicts unparsed"] == "2 did not parse: their items ties, the 2023 rule"
    assert "cost" not in run.settings and "the debate's effect" not in run.settings
    assert run.columns[-1] == "did not parse"
    assert ("failures", "verdicts that did not parse") in report.filters
    failed = next(item for item in report.items if item.id == "3")
    assert [d.columns for d in failed.debates] == [["score A", "score B", "winner"]] * 2
    assert [r.cells for r in failed.debates[0].referees] == [["6", "9", "B"], ["6", "8", "B"]]
    outcome = failed.outcomes[0]
    assert outcome is not None
    assert outcome.decision.endswith("Left out (a reply did not parse: a tie, the 2023 rule): Critic.")

    report = build_report([runs["single"]])
    (run,) = report.runs
    assert run.settings["verdict"] == "score 1-10 (imported)" and "answer orders" not in run.settings
    decisions = {item.id: item.outcomes[0].decision for item in report.items if item.outcomes[0]}
    assert decisions["81:steady"] == "Imported scores: score 8.00."  # the judge's, no mean of referees
    assert decisions["84:wordy"] == "Imported scores: none (the judge's verdict skipped)."
    assert "below a baseline" not in run.settings  # no human scores, no baselines to be below

    (run,) = build_report([runs["alpaca"]]).runs
    assert run.settings["verdict"] == "winners, each preference's position on its scale (imported: no scores)"
    report = build_report([runs["alpaca"]])
    assert report.items[0].debates[0].columns == ["winner", "A's share"]
    # No labels, one answer order: nothing can be wrong or position-inconsistent.
    assert report.filters == [("failures", "skipped verdicts")]
    (run,) = build_report([runs["arena"]]).runs
    assert run.settings["verdict"] == "winners, strong verdicts weighted (imported: no scores)"


def test_the_html_page_of_an_import_without_labels_has_no_agreement_section(
    newer: dict[str, RunResult], tmp_path: Path
) -> None:
    page = write_html_report([newer["alpaca"].outdir], tmp_path / "alpaca").read_text(encoding="utf-8")
    assert "<h2>Agreement with" not in page and "<th>cost</th>" not in page
