"""The field's judgments as their tools publish them: JudgeBench's outputs, AlpacaEval's
annotations and Arena-Hard's model judgments, each imported by its recipe (configs/import) from
a sample written for this project in the tool's own layout (configs/samples). Each number the
tool prints comes out of the run folder equal to a reference computed here the way the tool's
own code computes it (re-implemented in a few lines, citing the file and function), not by
chateval's functions. And a chateval panel run on JudgeBench's pairs (table_pairwise) compares
item by item with the imported judge."""

import json
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.config.files import load_config
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.importing import import_run
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, assert_same_statistics, read_jsonl
from tests.support.scripted import soft_checksum_referee

RECIPES = CONFIGS_DIR / "import"
SAMPLES = CONFIGS_DIR / "samples"
JUDGEBENCH_OUTPUTS = (
    SAMPLES
    / "judgebench"
    / "outputs"
    / "dataset=judgebench,response_model=sample-writer,judge_name=arena_hard,judge_model=sample-judge.jsonl"
)
JUDGEBENCH_PAIRS = SAMPLES / "judgebench" / "data" / "dataset=judgebench,response_model=sample-writer.jsonl"
ALPACA_RESULTS = SAMPLES / "alpaca_eval" / "results"
ARENA_JUDGMENTS = SAMPLES / "arena_hard" / "model_judgment" / "sample-judge"
runner = CliRunner()


def _metrics(folder: Path) -> dict[str, Any]:
    metrics: dict[str, Any] = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    return metrics


def _by_verdict(folder: Path) -> dict[str, dict[str, Any]]:
    """The measure verdict_win_rates' rows, by system."""
    return {row["system"]: row for row in _metrics(folder)["measures"]["verdict_win_rates"]["rows"]}


# JudgeBench ----------------------------------------------------------------------------------


def judgebench_score(pairs: list[dict[str, Any]]) -> float:
    """JudgeBench's score, as ScalerLab/JudgeBench's utils/metrics.py compute_final_metrics
    computes it with reverse_order: the second judgment's decision flipped back (flip_judgment),
    each decision +1 when it is the label, -1 when it is the other, 0 otherwise (a tie, None, a
    judgment that is None); a pair is correct when the sum is positive; 100 * correct / pairs."""

    def flip(decision: str | None) -> str | None:
        return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision) if decision else decision

    correct = 0
    for pair in pairs:
        label = pair["label"]
        first, second = pair["judgments"]
        decisions = (
            first["decision"] if first is not None else None,
            flip(second["decision"] if second is not None else None),
        )
        counter = sum(1 if d == label else -1 if d == flip(label) else 0 for d in decisions)
        correct += counter > 0
    return 100 * correct / len(pairs)


def test_judgebench_outputs_import_with_its_score(tmp_path: Path) -> None:
    out = tmp_path / "judgebench"
    result = runner.invoke(app, ["import", str(RECIPES / "judgebench.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    pairs = read_jsonl(JUDGEBENCH_OUTPUTS)
    section = _metrics(out)["measures"]["judgebench"]
    assert section["pairs"] == len(pairs) == 8
    assert 100 * section["accuracy"]["value"] == pytest.approx(judgebench_score(pairs)) == 62.5
    # The records name no systems: each comparison is its pair, named by pair_id, with the texts
    # and category of the same record and its objective label.
    records = {r["item_id"]: r for r in read_jsonl(out / "verdicts.jsonl")}
    assert set(records) == {p["pair_id"] for p in pairs}
    assert not any("system_a" in r for r in records.values())
    assert "systems" not in _metrics(out)
    items = {i["id"]: i for i in read_jsonl(out / "items.jsonl")}
    assert items["jb-02"]["answer_b"].startswith("Argon is in group 18")
    assert (items["jb-02"]["category"], records["jb-02"]["human_label"]) == ("mmlu-pro-chemistry", "B")
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))["imported"]
    assert info["skipped"] == {"null": 2} and info["labels"]["kind"] == "objective"
    # jb-05: the swapped decision is null; the original order's verdict stands for JudgeBench's
    # score, while the item's decision leaves the judge out (undecided).
    skipped = records["jb-05"]
    assert [o["label"] for o in skipped["orders"]] == ["A", None] and skipped["label"] is None
    # jb-06: the second judgment is null as a whole (the judge raised).
    assert records["jb-06"]["orders"][1]["referees"][0]["raw"] == "null"


def test_a_panel_on_judgebench_pairs_compares_item_by_item_with_the_imported_judge(tmp_path: Path) -> None:
    """The shipped panel config on JudgeBench's pairs file (table_pairwise, ids from pair_id;
    scripted referees here) and the imported judge of the same pairs share their item ids:
    compare pairs all 8."""
    panel = tmp_path / "panel"
    config = load_config(CONFIGS_DIR / "judgebench_panel.yaml")
    assert config.data.file == JUDGEBENCH_PAIRS
    run(config, panel, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)})
    imported = tmp_path / "judgebench"
    import_run(RECIPES / "judgebench.yaml", imported)
    panel_ids = {r["item_id"] for r in read_jsonl(panel / "verdicts.jsonl")}
    assert panel_ids == {r["item_id"] for r in read_jsonl(imported / "verdicts.jsonl")}
    result = runner.invoke(app, ["compare", str(panel), str(imported), "-o", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    compared = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert "| judgebench_panel | judgebench | 8 | " in compared  # items shared: all 8


# AlpacaEval ----------------------------------------------------------------------------------


def alpaca_eval_win_rates(preferences: list[float | None]) -> tuple[float, float]:
    """AlpacaEval's win_rate and discrete_win_rate of generator_2 against generator_1, as
    tatsu-lab/alpaca_eval's metrics/winrate.py get_winrate computes them through
    metrics/helpers.py describe_head2head: 0 is read as a draw (1.5), a value that is not a
    preference (NaN, or off 1..2: utils.validate_alpacaeval_preference) is dropped, and the mean
    of preference - 1, x100; discrete (ZeroOneScoringRule): 1.5 a draw, others rounded (pandas'
    round, half to even: Python's), then the same mean."""
    read = [1.5 if p == 0 else p for p in preferences if p is not None]
    kept = [p for p in read if 1 <= p <= 2]
    win_rate = fmean(p - 1 for p in kept) * 100
    discrete = fmean((1.5 if p == 1.5 else round(p)) - 1 for p in kept) * 100
    return win_rate, discrete


def test_alpaca_eval_annotations_import_with_its_win_rates(tmp_path: Path) -> None:
    out = tmp_path / "alpaca_eval"
    import_run(RECIPES / "alpaca_eval.yaml", out)
    rows = _by_verdict(out)
    for model in ("sample-concise", "sample-verbose"):
        records = json.loads(
            (ALPACA_RESULTS / model / "weighted_sample_judge" / "annotations.json").read_text(
                encoding="utf-8"
            )
        )
        assert {r["generator_1"] for r in records} == {"sample-reference"}
        win_rate, discrete = alpaca_eval_win_rates([r["preference"] for r in records])
        row = rows[model]
        assert row["opponent"] == "sample-reference"
        assert 100 * row["soft_win_rate"] == pytest.approx(win_rate)
        assert 100 * row["win_rate"] == pytest.approx(discrete)
        # One verdict per instruction: the discrete win rate is chateval's own win rate too.
        overall = {r["system"]: r for r in _metrics(out)["systems"]["win_rates"]["overall"]}
        assert 100 * overall[model]["win_rate"]["value"] == pytest.approx(discrete)
    # sample-verbose's last preference is null: dropped (AlpacaEval drops NaN), counted.
    assert (rows["sample-verbose"]["comparisons"], rows["sample-concise"]["comparisons"]) == (5, 6)
    assert _metrics(out)["measures"]["verdict_win_rates"]["left_out"] == 1
    # 1.5 is a tie; the texts come from each model's outputs, the baseline named second.
    records = read_jsonl(out / "verdicts.jsonl")
    tie = [r for r in records if r["orders"][0]["referees"][0].get("share_a") == 0.5]
    assert len(tie) == 1 and tie[0]["label"] == "tie" and tie[0]["system_b"] == "sample-reference"
    assert {r["system_b"] for r in records} == {"sample-reference"}
    assert all(r["words_a"] > 0 for r in records)


# Arena-Hard ----------------------------------------------------------------------------------


def arena_hard_win_rate(records: list[dict[str, Any]], weight: int = 3) -> float:
    """A model's score against the baseline, as lmarena/arena-hard-auto's show_result.py
    computes it (v2.0): load_judgments drops a question whose game or score is null, maps each
    game's score to the model's points (label_to_score: a strong verdict repeated ``weight``
    times; game 2 shows the model as A, game 1 the baseline, so its points are 1 - s), and
    print_leaderboard reports their mean, x100 (the mean of 100 bootstrap resamples of it: this
    is the statistic they resample)."""
    label_to_score = {
        "A>B": [1],
        "A>>B": [1] * weight,
        "A=B": [0.5],
        "A<<B": [0] * weight,
        "A<B": [0],
        "B>A": [0],
        "B>>A": [0] * weight,
        "B=A": [0.5],
        "B<<A": [1] * weight,
        "B<A": [1],
    }
    scores: list[float] = []
    for record in records:
        games = record["games"]
        if any(game is None or game["score"] is None for game in games):
            continue
        scores += label_to_score[games[1]["score"]] + [1 - s for s in label_to_score[games[0]["score"]]]
    return fmean(scores) * 100


def test_arena_hard_judgments_import_with_its_win_rate_against_the_baseline(tmp_path: Path) -> None:
    out = tmp_path / "arena_hard"
    import_run(RECIPES / "arena_hard.yaml", out)
    rows = _by_verdict(out)
    assert set(rows) == {"sample-swift", "sample-thorough"}  # each file's name
    for model, row in rows.items():
        assert row["opponent"] == "sample-anchor"  # the recipe's name for the baseline
        reference = arena_hard_win_rate(read_jsonl(ARENA_JUDGMENTS / f"{model}.jsonl"))
        assert 100 * row["win_rate"] == pytest.approx(reference)
    assert (100 * rows["sample-swift"]["win_rate"], 100 * rows["sample-thorough"]["win_rate"]) == (25.0, 87.5)
    # sample-swift's ah04 has a null score: the question is left out; its strong verdicts weigh 3.
    assert (rows["sample-swift"]["comparisons"], rows["sample-swift"]["weight"]) == (4, 12.0)
    strong = next(
        r for r in read_jsonl(out / "verdicts.jsonl") if r["item_id"] == "ah03:sample-swift-vs-sample-anchor"
    )
    assert [o["referees"][0]["weight"] for o in strong["orders"]] == [3.0, 3.0]
    assert strong["label"] == "B"  # the baseline, named second as a run against it names it


def test_a_rescore_of_an_imported_run_keeps_its_source_figures(tmp_path: Path) -> None:
    out = tmp_path / "arena_hard"
    import_run(RECIPES / "arena_hard.yaml", out)
    before = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    result = runner.invoke(app, ["rescore", str(out)])
    assert result.exit_code == 0, result.output
    assert_same_statistics(json.loads((out / "metrics.json").read_text(encoding="utf-8")), before)
