"""The step journal on its own: round trips, torn tails, records written twice and older formats."""

import json
from pathlib import Path

import pytest

from chateval.core.distributions import ScoreDistribution
from chateval.core.transcript import Turn, Utterance
from chateval.core.usage import ModelUsage
from chateval.errors import DataError
from chateval.record import journal
from chateval.record.files import RunFolder

DISCUSSION = Utterance(Turn(0, 0), "Critic", "discussion", "The first answer is precise.", tokens=6)
ASSESSMENT = Utterance(Turn(1, 0, "check"), "Critic", "assessment", "Still the first.")
SCORES = Utterance(
    Turn(1, 0, "check", scoring=True),
    "Critic",
    "probe",
    "Assistant 1: 8\nAssistant 2: 3",
    distributions=(
        ScoreDistribution({8: 0.75, 7: 0.25}, 0.0, 0.0),
        ScoreDistribution({3: 1.0}, 0.0, 0.0),
    ),
)
SUMMARY = Utterance(Turn(0, None, "summary"), "Summarizer", "summary", "They agree.", "length")


def usage(requests: int) -> dict[str, ModelUsage]:
    return {"m": ModelUsage(batches=1, requests=requests, prompt_tokens=10 * requests)}


def test_barrier_steps_round_trip(tmp_path: Path) -> None:
    path = RunFolder(tmp_path).journal
    journal.append_step(path, 0, [("a", DISCUSSION), ("b", SUMMARY)], usage(2))
    journal.append_step(path, 1, [("a", ASSESSMENT), ("a", SCORES)], usage(2))
    state = journal.load(path)
    assert state.steps_done == 2
    assert state.utterances == {"a": [DISCUSSION, ASSESSMENT, SCORES], "b": [SUMMARY]}
    assert state.usage["m"] == ModelUsage(batches=2, requests=4, prompt_tokens=40)
    assert state.valid_bytes == path.stat().st_size


def test_streaming_steps_count_per_debate(tmp_path: Path) -> None:
    path = RunFolder(tmp_path).journal
    journal.append_step(path, 0, [("a", DISCUSSION)], usage(1), debate="a")
    journal.append_step(path, 2, [("a", ASSESSMENT)], usage(1), debate="a")  # step 1 had nothing
    journal.append_step(path, 0, [("b", DISCUSSION)], usage(1), debate="b")
    state = journal.load(path)
    assert (state.debate_progress("a"), state.debate_progress("b"), state.debate_progress("c")) == (3, 1, 0)
    assert [u.text for u in state.utterances["a"]] == [DISCUSSION.text, ASSESSMENT.text]


def test_a_torn_tail_is_ignored_then_cut(tmp_path: Path) -> None:
    path = RunFolder(tmp_path).journal
    journal.append_step(path, 0, [("a", DISCUSSION)], usage(1))
    whole = path.stat().st_size
    with path.open("a", encoding="utf-8") as handle:  # step 1's utterance, then a torn marker
        handle.write(json.dumps({"step": 1, "debate": "a", "round": 1, "agent": 0}) + '\n{"step_do')
    state = journal.load(path)
    assert state.steps_done == 1 and len(state.utterances["a"]) == 1
    journal.truncate_to_complete(path, state)
    assert path.stat().st_size == whole


def test_steps_and_waves_written_twice_alike_are_read_once_and_the_copies_cut(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two runs at once (before folders were locked) wrote each record twice: the copies said
    the same (their usage counts may differ), so the journal resumes without them."""
    path = RunFolder(tmp_path).journal
    journal.start(path, {})
    journal.append_wave(path, 0, ["a"])
    journal.append_step(path, 0, [("a", DISCUSSION)], usage(1), debate="a")
    journal.append_wave(path, 0, ["a"])
    journal.append_step(path, 0, [("a", DISCUSSION)], usage(2), debate="a")  # another process's counts
    journal.append_step(path, 1, [("a", ASSESSMENT)], usage(1), debate="a")
    journal.append_step(path, 1, [("a", ASSESSMENT)], usage(1), debate="a")
    state = journal.load(path)
    assert state.debate_progress("a") == 2 and state.utterances["a"] == [DISCUSSION, ASSESSMENT]
    assert state.waves == [["a"]] and state.usage["m"].requests == 2  # the first copies' counts
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning == (
        f"{path}: 3 record(s) written twice alike (two runs wrote this folder at once?): the second "
        "copies are dropped (first: wave 0, lines 2 and 5)"
    )
    journal.truncate_to_complete(path, state)
    lines = path.read_text().splitlines()
    assert len(lines) == 6 and state.valid_bytes == path.stat().st_size and state.dropped == []
    caplog.clear()
    again = journal.load(path)
    assert (again.utterances, again.usage, again.waves) == (state.utterances, state.usage, state.waves)
    assert caplog.records == []


@pytest.mark.parametrize("debate", [None, "a"])
def test_a_step_written_twice_differently_is_refused_naming_both_lines(
    tmp_path: Path, debate: str | None
) -> None:
    path = RunFolder(tmp_path).journal
    journal.append_step(path, 0, [("a", DISCUSSION)], usage(1), debate=debate)
    journal.append_step(path, 0, [("a", ASSESSMENT)], usage(1), debate=debate)
    step = "step 0" if debate is None else "debate 'a' step 0"
    with pytest.raises(DataError) as refused:
        journal.load(path)
    assert str(refused.value) == (
        f"{path}: {step} is marked done twice, with different utterances (lines 2 and 4); pass "
        "--force to start over"
    )


def test_a_wave_chosen_twice_differently_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = RunFolder(tmp_path).journal
    journal.append_wave(path, 0, ["p1:x-vs-y"])
    journal.append_wave(path, 0, ["p2:x-vs-z"])
    with pytest.raises(DataError, match=r"wave 0 is chosen twice, differently \(lines 1 and 2\)"):
        journal.load(path)


def test_adaptive_waves_stop_and_batch_steps_round_trip(tmp_path: Path) -> None:
    """An adaptive run's choices, and the barrier steps of its batches, marked per debate."""
    path = RunFolder(tmp_path).journal
    journal.append_wave(path, 0, ["p1:x-vs-y"])
    journal.append_wave(path, 1, ["p2:x-vs-z", "p1:y-vs-z"])
    journal.append_step(path, 0, [("a", DISCUSSION), ("b", DISCUSSION)], usage(2), debates=["a", "b"])
    journal.append_step(path, 0, [("c", DISCUSSION)], usage(1), debates=["c"])  # the next batch
    journal.append_stop(path, "resolved")
    state = journal.load(path)
    assert state.waves == [["p1:x-vs-y"], ["p2:x-vs-z", "p1:y-vs-z"]] and state.stop == "resolved"
    assert [state.debate_progress(k) for k in "abc"] == [1, 1, 1] and state.steps_done == 0
    assert state.usage["m"].requests == 3 and state.valid_bytes == path.stat().st_size
    whole = path.stat().st_size
    with path.open("a", encoding="utf-8") as handle:  # a wave torn by a kill
        handle.write('{"wave": 2, "keys": ["p3')
    state = journal.load(path)
    assert len(state.waves) == 2
    journal.truncate_to_complete(path, state)
    assert path.stat().st_size == whole


def test_a_wave_out_of_order_is_refused(tmp_path: Path) -> None:
    path = RunFolder(tmp_path).journal
    journal.append_wave(path, 1, ["p1:x-vs-y"])
    with pytest.raises(DataError, match="wave 1 follows 0 waves"):
        journal.load(path)


def test_a_missing_journal_is_an_empty_state(tmp_path: Path) -> None:
    state = journal.load(RunFolder(tmp_path).journal)
    assert (state.steps_done, state.utterances, state.valid_bytes) == (0, {}, 0)


@pytest.mark.parametrize(
    ("record", "kind"),
    [
        ({"agent": 0, "kind": "discussion"}, "discussion"),
        ({"agent": None, "kind": "summary"}, "summary"),
        ({"agent": 0, "kind": "assessment"}, "verdict"),
        ({"agent": 0, "kind": "verdict", "scoring": True}, "verdict"),
        ({"agent": 0, "kind": "probe", "probe": True}, "probe"),
        ({"agent": 0, "kind": "assessment", "probe": True}, "probe"),
        ({"agent": 0, "kind": "verdict", "probe": True}, "check"),  # a check that ended the debate
        ({"agent": 0, "kind": "probe"}, "probe"),  # before hidden turns were flagged at all
    ],
)
def test_journals_from_before_turn_kinds_still_load(
    tmp_path: Path, record: dict[str, object], kind: str
) -> None:
    path = RunFolder(tmp_path).journal
    line = {"step": 0, "debate": "a", "round": 1, "speaker": "S", "text": "t", "finish_reason": "stop"}
    marker = {"step_done": 0, "usage": {"m": {"backend_calls": 1, "requests": 1}}}
    path.write_text(json.dumps(line | record) + "\n" + json.dumps(marker) + "\n")
    state = journal.load(path)
    assert state.utterances["a"][0].turn.kind == kind
    assert state.utterances["a"][0].tokens is None  # not recorded then
    assert state.usage["m"].batches == 1


def test_a_new_journal_starts_with_its_format_and_an_old_one_reads_as_version_1(tmp_path: Path) -> None:
    from chateval.record.migrations import FORMAT_VERSION

    path = tmp_path / "journal.jsonl"
    journal.start(path, {"data.jsonl": "sha256:00"})
    journal.append_step(path, 0, [], {"m": ModelUsage(requests=1)})
    header = {"format_version": FORMAT_VERSION, "inputs": {"data.jsonl": "sha256:00"}}
    assert json.loads(path.read_text().splitlines()[0]) == header
    assert journal.changed_inputs(path, {"data.jsonl": "sha256:00"}) == []
    assert journal.changed_inputs(path, {"data.jsonl": "sha256:01"}) == ["data.jsonl"]
    state = journal.load(path)
    assert state.format_version == FORMAT_VERSION and state.steps_done == 1
    assert state.valid_bytes == path.stat().st_size
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    assert journal.load(old).format_version == 1 and journal.load(old).steps_done == 1


def test_a_journal_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(json.dumps({"format_version": 99}) + "\n")
    with pytest.raises(
        DataError, match=r"journal.jsonl: written in run folder format 99 by a newer chateval"
    ):
        journal.load(path)


def test_a_broken_journal_line_is_named_by_line_and_field(tmp_path: Path) -> None:
    path = RunFolder(tmp_path).journal
    journal.start(path, {})
    journal.append_step(path, 0, [("a", DISCUSSION)], usage(1))
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"round": 0', '"round": "first"')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"journal.jsonl:2: field round: Input should be a valid integer"):
        journal.load(path)
