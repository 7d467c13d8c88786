"""Multi-turn conversations (``data.turn``): a judged turn arrives with the turns before it, each
system's own earlier replies quoted before the question in every layout, kept in items.jsonl,
and cut earliest first to fit a context. The MT-Bench-layout sample of configs/samples."""

import json
from pathlib import Path
from typing import Any

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.config.files import load_config
from chateval.core.items import EarlierTurn, PairwiseItem
from chateval.debate.building import build_panel, load_run_items
from chateval.engines.context import fit_item
from chateval.errors import ConfigError, DataError
from chateval.record.items import item_of_record, item_record
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, prompt_text, read_jsonl, tiny_config

MODEL = "smollm2-135m"
MT_BENCH = CONFIGS_DIR / "samples" / "mt_bench"


def _answers(system: str) -> dict[int, list[str]]:
    rows = read_jsonl(MT_BENCH / "model_answer" / f"{system}.jsonl")
    return {row["question_id"]: row["choices"][0]["turns"] for row in rows}


def _questions() -> dict[int, list[str]]:
    return {row["question_id"]: row["turns"] for row in read_jsonl(MT_BENCH / "question.jsonl")}


def _data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": "table_responses",
        "path": str(MT_BENCH / "model_answer"),
        "system_from": "file",
        "fields": {"prompt": "question_id", "response": "choices.0.turns"},
        "questions": {"path": str(MT_BENCH / "question.jsonl"), "question": "turns", "category": "category"},
        "turn": 2,
    }
    return data | changes


def test_the_second_turn_comes_with_the_first_and_each_systems_own_reply() -> None:
    items = load_run_items(load_config(CONFIGS_DIR / "systems_multiturn.yaml"))
    assert len(items) == 18
    questions, steady, terse = _questions(), _answers("steady"), _answers("terse")
    item = next(i for i in items if i.id == "81:steady-vs-terse")
    assert isinstance(item, PairwiseItem)
    assert item.question == questions[81][1]
    assert (item.answer_a, item.answer_b) == (steady[81][1], terse[81][1])
    assert item.earlier == (EarlierTurn(questions[81][0], steady[81][0], terse[81][0]),)
    assert item.category == "writing"
    # items.jsonl keeps the conversation: the item read back is the item debated.
    assert item_of_record(json.loads(json.dumps(item_record(item)))) == item


def test_every_layout_quotes_the_earlier_turns_before_the_question_in_the_order_shown() -> None:
    item = next(i for i in load_run_items(tiny_config(data=_data())) if i.id == "83:steady-vs-wordy")
    assert isinstance(item, PairwiseItem)
    (turn,) = item.earlier
    layouts = ("paper", "conversation", "shared_first", "role_first", "compact")
    for layout, style in [(layout, "paper") for layout in layouts] + [("paper", "nudged")]:
        prompts = build_panel(tiny_config(data=_data(), prompt_layout=layout, prompt_style=style)).prompts
        for swapped, first, second in (
            (False, turn.answer_a, turn.answer_b),
            (True, turn.answer_b, turn.answer_a),
        ):
            block = prompts.task_block(item, swapped)
            before, question = block.split("[Question]")
            assert "[Conversation before the question]" in before and f"User: {turn.question}" in before
            # Assistant 1 is whichever answer is shown first, in the earlier turns too.
            assert before.index(f"Assistant 1: {first}") < before.index(f"Assistant 2: {second}")
            assert question.lstrip().startswith(item.question)
    # A one-turn item's prompt has no such block.
    one_turn = load_run_items(tiny_config())[0]
    assert "[Conversation before" not in build_panel(tiny_config()).prompts.task_block(one_turn)


def test_the_earliest_turns_go_first_when_the_context_is_short() -> None:
    long_first = EarlierTurn("First question " * 5, "an early reply " * 60, "another early reply " * 60)
    second = EarlierTurn("Second question?", "Short.", "Brief.")
    item = PairwiseItem("x", "Third question?", "Yes.", "No.", earlier=(long_first, second))
    config = tiny_config(data=_data())
    panel = build_panel(config)
    backend = ScriptedBackend(MODEL, lambda request: "x", context_window=700)
    fitted, cut = fit_item(panel, item, backend, "truncate", "test")
    assert isinstance(fitted, PairwiseItem)
    assert fitted.earlier == (second,) and fitted.earlier_left_out == 1
    assert (fitted.answer_a, fitted.answer_b) == ("Yes.", "No.")  # the answers are kept whole
    assert cut is not None and cut.fields == {"earlier_turns": (2, 1)}
    assert "(Its first 1 turn is left out here, to fit the referees' context.)" in panel.prompts.task_block(
        fitted
    )


@pytest.mark.slow  # a scripted run end to end
def test_a_run_judges_the_second_turn_and_records_it(tmp_path: Path) -> None:
    seen: list[str] = []

    def referee(request: Any) -> str:
        seen.append(prompt_text(request))
        return (
            "Assistant 1: 6\nAssistant 2: 5" if "scores" in prompt_text(request).lower()[-300:] else "Fine."
        )

    config = tiny_config(data=_data(limit=1), rounds=1)
    run(config, tmp_path, backends={MODEL: ScriptedBackend(MODEL, referee)})
    assert all("[Conversation before the question]" in text for text in seen)
    items = read_jsonl(tmp_path / "items.jsonl")
    assert len(items) == 3 and all(len(item["earlier"]) == 1 for item in items)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"turn": 3}, "question.jsonl:1: field 'turns' has 2 turns; data.turn 3 needs 3"),
        (
            {"fields": {"prompt": "question_id", "response": "choices.0.turns.0"}},
            "field 'choices.0.turns.0' must list the conversation's turns (data.turn), got str",
        ),
    ],
)
def test_turns_that_are_not_there_name_the_file_record_and_field(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_run_items(tiny_config(data=_data(**changes)))


def test_turn_is_read_by_responses_files_only() -> None:
    with pytest.raises(ConfigError, match="turn: only the formats jsonl_responses, table_responses read"):
        tiny_config(data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "turn": 2})


def test_a_one_turn_items_line_is_as_before() -> None:
    """items.jsonl of data without conversations or categories keeps its earlier shape."""
    record = item_record(PairwiseItem("x", "Q?", "a", "b"))
    assert not {"earlier", "earlier_left_out", "category"} & set(record)


def test_a_labels_file_with_a_turn_is_refused() -> None:
    labels = {
        "path": "samples/systems_labels.csv",
        "system_a": "first",
        "system_b": "second",
        "label": "preferred",
    }
    with pytest.raises(ConfigError, match="labels_file and turn together are not supported yet"):
        tiny_config(data=_data(labels_file=labels))
