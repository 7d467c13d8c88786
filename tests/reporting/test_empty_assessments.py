"""A referee that opens its verdict with its score lines: the assessment is cut where the
scores start and comes out empty. Its verdict still parses (the constrained scores request
writes the scores), every report counts the empty assessments, and the HTML report says the
referee gave no explanation instead of showing an empty one."""

from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import GenerationRequest
from chateval.evaluation.diagnostics.text import EMPTY_ASSESSMENT
from chateval.reporting.html import write_html_report
from chateval.reporting.html_views import run_settings
from chateval.reporting.markdown import write_report
from chateval.reporting.summary import print_summary
from chateval.run.finished import load_finished_run
from chateval.run.runner import RunResult, run
from tests.support.helpers import asks_for_scores, read_jsonl, tiny_config

AGENTS = [{"role": "critic", "model": "scores-first"}, {"role": "everyday_reader", "model": "explains"}]


def referee(request: GenerationRequest) -> str:
    """``scores-first`` answers its verdict's assessment request with score lines; both give
    the constrained scores request 7 and 5."""
    if asks_for_scores(request):
        return "\nAssistant 1: 7\nAssistant 2: 5"
    # A scripted backend ignores the assessment's constraint (an explanation first): it is
    # what a backend without constraints would let through.
    if request.regex is not None and request.model == "scores-first":
        return "Assistant 1: 7\nAssistant 2: 5"
    return f"{request.model}: the first answer is more precise than the second."


@pytest.fixture(scope="module")
def scored_first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    folder = tmp_path_factory.mktemp("scores_first")
    backends = {model: ScriptedBackend(model, referee) for model in ("scores-first", "explains")}
    return folder, run(tiny_config(agents=AGENTS), folder, backends=backends)


def test_the_verdict_stays_and_its_empty_assessment_is_counted(scored_first: tuple[Path, RunResult]) -> None:
    folder, result = scored_first
    records = read_jsonl(folder / "verdicts.jsonl")
    debates = [order for record in records for order in record["orders"]]
    assert len(debates) == 4 and all(r["parse_failures"] == 0 for r in records)
    for order in debates:
        critic, reader = order["referees"]
        assert (critic["score_a"], critic["score_b"]) in ((7, 5), (5, 7))  # scores from the scores request
        assert critic["assessment"] == "" and critic["cut_off"]["assessments_empty"] == 1
        assert critic["cut_off"]["verdict_assessment_empty"] is True
        assert reader["assessment"] and reader["cut_off"]["assessments_empty"] == 0
    metrics = result.metrics
    assert metrics is not None
    assert metrics["per_model"]["scores-first"].get("empty_assessments") == {
        "assessments": 4,
        "empty": 4,  # one per debate
        "share": 1.0,
        "reason": None,
        "verdicts_with_assessment": 4,
        "verdicts_empty": 4,
        "verdicts_share": 1.0,
    }
    reader_model = metrics["per_model"]["explains"].get("empty_assessments")
    assert reader_model is not None and reader_model["empty"] == 0
    panel = metrics["empty_assessments"]
    assert panel is not None and (panel["empty"], panel["assessments"]) == (4, 8)


def test_the_reports_count_them_and_never_show_an_empty_explanation(
    scored_first: tuple[Path, RunResult], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, result = scored_first
    print_summary(result)
    out = capsys.readouterr().out
    assert "empty assessments: 4/4 assessments (4/4 verdicts' own)" in out
    assert "empty assessments: 0/4 assessments (0/4 verdicts' own)" in out
    finished = load_finished_run(folder)
    assert "| 4/4 assessments (4/4 verdicts' own) |" in write_report([folder], tmp_path / "md").read_text()
    assert run_settings(finished)["empty assessments"] == "4/8 assessments (4/8 verdicts' own)"
    page = write_html_report([folder], tmp_path / "report").read_text(encoding="utf-8")
    marker = EMPTY_ASSESSMENT.replace("'", "&#39;")
    assert page.count(marker) == 4  # the critic's assessment in each debate
    assert '<div class="text"></div>' not in page
