"""A multi-turn run's reports (``data.turn``): report.html's item view shows the conversation
before the judged turn as the referees saw it, each system's own earlier replies, and numbers
the judged turn; its settings and report.md say which turn was judged. The MT-Bench-layout
sample, judged by a scripted referee."""

import dataclasses
from pathlib import Path

import pytest
from markupsafe import escape

from chateval.backends.scripted import ScriptedBackend
from chateval.core.items import PairwiseItem
from chateval.engines.models import DEFAULT_MODEL
from chateval.reporting.html import render_index, render_item_pages
from chateval.reporting.html_runs import run_settings
from chateval.reporting.html_views import build_report
from chateval.reporting.markdown import write_report
from chateval.run.finished import FinishedRun, load_finished_run
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, read_jsonl, tiny_config
from tests.support.scripted import soft_checksum_referee

MT_BENCH = CONFIGS_DIR / "samples" / "mt_bench"
DATA = {
    "format": "table_responses",
    "path": str(MT_BENCH / "model_answer"),
    "system_from": "file",
    "fields": {"prompt": "question_id", "response": "choices.0.turns"},
    "questions": {"path": str(MT_BENCH / "question.jsonl"), "question": "turns"},
    "turn": 2,
    "limit": 1,  # one question: its 3 pairs of systems
}


@pytest.fixture(scope="module")
def second_turn(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    out = tmp_path_factory.mktemp("multiturn")
    backends = {DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)}
    run(tiny_config(data=DATA, rounds=1), out, backends=backends)
    return load_finished_run(out)


def test_the_item_view_shows_the_earlier_turns_and_numbers_the_judged_one(second_turn: FinishedRun) -> None:
    report = build_report([second_turn])
    item = report.items[0]
    assert isinstance(item.data, PairwiseItem)
    (earlier,) = item.data.earlier
    page = render_item_pages(report)[f"{item.anchor}.html"]
    question = read_jsonl(MT_BENCH / "question.jsonl")[0]["turns"]
    assert earlier.question == question[0] and item.data.question == question[1]
    assert "The conversation before the judged turn, as the referees saw it</summary>" in page
    assert f"<b>Turn 1.</b> {escape(earlier.question)}" in page
    replies = page.index("<b>A's reply</b>")  # each system's own first reply, A's then B's
    assert replies < page.index(escape(earlier.answer_a)) < page.index("<b>B's reply</b>")
    assert page.index(escape(earlier.answer_b)) > page.index("<b>B's reply</b>")
    assert f"<b>Question, turn 2 (judged).</b> {escape(item.data.question)}" in page
    # Turns cut to fit a context are said, and the numbering counts them.
    cut = dataclasses.replace(item, data=dataclasses.replace(item.data, earlier_left_out=2))
    page = render_item_pages(dataclasses.replace(report, items=[cut]))[f"{item.anchor}.html"]
    assert "(its first 2 turns left out to fit the context)" in page
    assert "<b>Turn 3.</b>" in page and "<b>Question, turn 4 (judged).</b>" in page


def test_a_one_turn_item_has_no_earlier_conversation(second_turn: FinishedRun) -> None:
    report = build_report([second_turn])
    item = report.items[0]
    assert isinstance(item.data, PairwiseItem)
    alone = dataclasses.replace(item, data=dataclasses.replace(item.data, earlier=()))
    page = render_item_pages(dataclasses.replace(report, items=[alone]))[f"{item.anchor}.html"]
    assert "conversation before" not in page and "<b>Question.</b>" in page


def test_the_settings_and_report_md_say_which_turn_was_judged(
    second_turn: FinishedRun, tmp_path: Path
) -> None:
    said = "judged turn 2 of each conversation; the referees saw the turns before it"
    assert said in run_settings(second_turn)["data"]
    report = write_report([second_turn.folder], tmp_path).read_text(encoding="utf-8")
    assert f"{second_turn.name}: {said} (report.html shows them with each item)" in report


def test_an_unlabelled_run_has_no_agreement_table(second_turn: FinishedRun) -> None:
    """No human labels (the MT-Bench sample carries none): the index leaves the agreement
    section out instead of showing a table with a header row only (issue 69, item 3)."""
    page = render_index(build_report([second_turn]), figures=[], split=False)
    assert "<h2>Runs</h2>" in page and "Agreement with" not in page and 'id="metrics"' not in page
