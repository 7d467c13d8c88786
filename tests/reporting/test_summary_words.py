"""The console summary in words a newcomer can read (issue 69): the run table's rows are worded,
not run.json's keys; the soft verdicts' reading says what its numbers mean and keeps them; a
panel of several models shows the per-category tables before its per-model diagnostics."""

import re
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.evaluation.measures import registered_measures
from chateval.reporting.metrics_view import SoftDistributions
from chateval.reporting.statistics_text import soft_reading_text
from chateval.reporting.summary import print_summary
from chateval.run.finished import load_finished_run
from chateval.run.runner import RunResult, run
from tests.support.helpers import CONFIGS_DIR, tiny_config
from tests.support.scripted import STEADY_AND_SWAYED_AGENTS, steady_or_swayed_referee

EARLIER_RUN = Path(__file__).parents[1] / "fixtures" / "run_folders" / "soft_verdicts"
MT_BENCH = CONFIGS_DIR / "samples" / "mt_bench"
# run.json's keys that the run table once printed as its rows' names.
RAW_KEYS = (
    "engine_steps",
    "prompt_tokens",
    "generated_tokens",
    "verdict_parse_failures",
    "cut_off_at_token_cap",
    "truncated_items",
    "model_load_seconds",
    "debate_seconds",
    "wall_seconds",
)


def test_the_run_table_names_its_rows_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    finished = load_finished_run(EARLIER_RUN)  # a streaming run: it counted engine steps
    print_summary(RunResult(finished.folder, finished.info, finished.metrics))
    out = capsys.readouterr().out
    assert re.search(r"│ engine decoding steps +│ +307 │", out)
    assert re.search(r"│ verdicts that failed to parse +│ +0 │", out)
    assert re.search(r"│ referees +│ +1 │", out)
    assert [key for key in RAW_KEYS if key in out] == []


def test_the_soft_reading_says_what_its_numbers_mean() -> None:
    said = soft_reading_text(SoftDistributions(96, 1.4375, 0.047, 0.0))
    assert said == (
        "soft verdicts: 96 scores read with their probabilities; mean uncertainty 1.44 bits (0: sure "
        "of one score, 1: split evenly between two); 4.7% of the probability placed by estimate (a "
        "first digit two scores share, as 1 and 10 do, given to the one nearer the written score); "
        "0.0% on no score of the scale (left out)"
    )


def test_the_categories_come_before_the_per_model_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [measure.name for measure in registered_measures()]
    assert names.index("categories") < names.index("per_model")
    data = {
        "format": "table_responses",
        "path": str(MT_BENCH / "model_answer"),
        "system_from": "file",
        "limit": 4,
        "fields": {"prompt": "question_id", "response": "choices.0.turns.0"},
        "questions": {
            "path": str(MT_BENCH / "question.jsonl"),
            "question": "turns.0",
            "category": "category",
        },
    }
    backends = {m: ScriptedBackend(m, steady_or_swayed_referee) for m in ("steady", "swayed")}
    print_summary(run(tiny_config(data=data, agents=STEADY_AND_SWAYED_AGENTS), tmp_path, backends=backends))
    out = capsys.readouterr().out
    assert "  steady\n" in out and "  swayed\n" in out  # one block per model
    assert out.index("systems per category") < out.index("by model:")
