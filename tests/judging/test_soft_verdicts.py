"""Soft verdicts: reading score distributions, aggregating them, and carrying them through a run.

Probabilities here are hand-built; a scripted "tokenizer" makes every character one token, so
token positions are character positions. Real-model checks are in tests/end_to_end/test_real_models.py.
"""

import itertools
import json
import math
from collections.abc import Mapping
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import GenerationRequest, GenerationResult, HFTokenCounting
from chateval.core.distributions import ScoreDistribution
from chateval.core.items import DirectItem, PairwiseItem
from chateval.core.transcript import Debate, Transcript, Turn, Utterance
from chateval.errors import ConfigError
from chateval.evaluation.run_metrics import compute_metrics
from chateval.judging.aggregate import aggregate_direct, aggregate_pairwise, position_stats
from chateval.judging.formats import Dimension, DirectFormat, PairwiseFormat
from chateval.judging.soft import check_vocabulary, read_score, score_pieces
from chateval.record.journal import append_step, load
from chateval.run.runner import run
from chateval.run.statistics import statistics_settings
from tests.support.helpers import asks_for_scores, read_jsonl, tiny_config

ONE_TO_TEN = tuple(range(1, 11))


def char_tokens(text: str) -> tuple[int, ...]:
    """Token ends when every character is one token."""
    return tuple(range(1, len(text) + 1))


def at(text: str, positions: Mapping[int, Mapping[str, float]]) -> tuple[dict[str, float], ...]:
    """Per-character probabilities: ``positions`` maps a character index to its digit probabilities."""
    return tuple(dict(positions.get(i, {})) for i in range(len(text)))


def span_of(text: str, value: str, occurrence: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(value, start + 1)
    return start, start + len(value)


# --- reading one score ---------------------------------------------------------------------


def test_score_pieces_are_every_digit_string_a_token_can_spell() -> None:
    assert score_pieces([ONE_TO_TEN]) == ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
    assert score_pieces([(1, 2, 3), (0, 1)]) == ("0", "1", "2", "3")


def test_single_token_values_are_read_exactly() -> None:
    text = "\nRelevance: 3"
    start = text.index("3")
    dist = read_score(
        text, (start, start + 1), char_tokens(text), at(text, {start: {"3": 0.6, "4": 0.4}}), (1, 2, 3, 4, 5)
    )
    assert dist.probabilities == {3: 0.6, 4: 0.4}
    assert dist.expected == pytest.approx(3.4)
    assert dist.entropy == pytest.approx(-(0.6 * math.log2(0.6) + 0.4 * math.log2(0.4)))
    assert dist.unmapped == 0 and dist.ambiguous == 0


def test_a_two_token_value_taken_by_the_decoder_is_split_exactly() -> None:
    # The decoder wrote "10": at "1" the next position says how "1" splits between 1 and 10.
    text = "\nAssistant 1: 10\nAssistant 2: 7"
    start = text.index("10")
    probs = at(text, {start: {"1": 0.7, "8": 0.3}, start + 1: {"0": 0.5}})
    dist = read_score(text, (start, start + 2), char_tokens(text), probs, ONE_TO_TEN)
    assert dist.probabilities == pytest.approx({10: 0.35, 1: 0.35, 8: 0.3})
    assert dist.ambiguous == 0 and dist.unmapped == pytest.approx(0)
    assert dist.mapped == pytest.approx(1.0)


def test_a_shared_first_token_not_taken_goes_to_the_nearest_value_and_is_marked_ambiguous() -> None:
    text = "\nAssistant 1: 8\nAssistant 2: 3"
    first, second = text.index("8"), text.index("3")
    probs = at(text, {first: {"1": 0.2, "8": 0.8}, second: {"1": 0.25, "3": 0.75}})
    high = read_score(text, (first, first + 1), char_tokens(text), probs, ONE_TO_TEN)
    low = read_score(text, (second, second + 1), char_tokens(text), probs, ONE_TO_TEN)
    assert high.probabilities == pytest.approx({10: 0.2, 8: 0.8})  # wrote 8: "1" counted as 10
    assert low.probabilities == pytest.approx({1: 0.25, 3: 0.75})  # wrote 3: "1" counted as 1
    assert high.ambiguous == pytest.approx(0.2) and low.ambiguous == pytest.approx(0.25)


def test_a_score_inside_a_token_is_unreadable_and_a_piece_off_the_scale_is_unmapped() -> None:
    text = "\nAssistant 1: 7"
    start = text.index("7")
    joined = (*range(1, start - 1), start + 1)  # " 7" is one token
    dist = read_score(text, (start, start + 1), joined, at(text, {start: {"7": 1.0}}), ONE_TO_TEN)
    assert dist.probabilities == {} and dist.unmapped == 1.0 and dist.expected is None
    off = read_score(
        text, (start, start + 1), char_tokens(text), at(text, {start: {"7": 0.9, "0": 0.1}}), ONE_TO_TEN
    )
    assert off.probabilities == {7: 0.9} and off.unmapped == pytest.approx(0.1)
    assert off.expected == pytest.approx(7.0)  # over the mapped mass


def test_distribution_records_round_trip() -> None:
    dist = ScoreDistribution({3: 0.25, 4: 0.75}, unmapped=0.0, ambiguous=0.1)
    record = dist.as_dict()
    assert record["expected"] == 3.75 and record["probabilities"] == {"3": 0.25, "4": 0.75}
    assert ScoreDistribution.from_dict(record) == dist


def test_vocabulary_check_refuses_tokens_that_join_a_score_to_its_line() -> None:
    digits = [str(d) for d in range(10)]
    check_vocabulary("m", ["Ass", "istant", ":", " ", "\n", *digits], [ONE_TO_TEN])
    for joined in (" 7", "7\n", ":7"):
        with pytest.raises(ConfigError, match="verdict.soft: false") as refused:
            check_vocabulary("m", [*digits, joined], [ONE_TO_TEN])
        assert f"model 'm': its vocabulary has a token {joined!r}" in str(refused.value)
    with pytest.raises(ConfigError, match="no digit tokens spell the score 10"):
        check_vocabulary("m", [d for d in digits if d != "0"], [ONE_TO_TEN])


# --- aggregation ---------------------------------------------------------------------------


def _verdict(
    speaker: str, agent: int, text: str, distributions: tuple[ScoreDistribution, ...] | None
) -> Utterance:
    return Utterance(Turn(0, agent, "verdict", scoring=True), speaker, "verdict", text, "stop", distributions)


def _pairwise_debate(swapped: bool, verdicts: list[Utterance]) -> Debate:
    item = PairwiseItem("q1", "question?", "answer a", "answer b", "A")
    return Debate("q1#swapped" if swapped else "q1", item, swapped, Transcript(tuple(verdicts)))


def point(value: int) -> ScoreDistribution:
    return ScoreDistribution({value: 1.0})


def spread(mass: Mapping[int, float]) -> ScoreDistribution:
    return ScoreDistribution(dict(mass))


def test_soft_pairwise_sums_expected_scores_over_referees_and_both_orders() -> None:
    fmt = PairwiseFormat()
    tie = "Assistant 1: 7\nAssistant 2: 7"
    # Hard: every verdict ties. Soft: both referees lean to A, in both orders (A is shown
    # second in the swapped order, so its distribution is the second one there).
    first = _pairwise_debate(
        False,
        [
            _verdict("Critic", 0, tie, (spread({7: 0.6, 8: 0.4}), spread({7: 0.9, 6: 0.1}))),
            _verdict("Reader", 1, tie, (spread({7: 0.5, 8: 0.5}), point(7))),
        ],
    )
    second = _pairwise_debate(
        True,
        [
            _verdict("Critic", 0, tie, (point(7), spread({7: 0.8, 8: 0.2}))),
            _verdict("Reader", 1, tie, (spread({7: 0.9, 6: 0.1}), spread({7: 0.7, 8: 0.3}))),
        ],
    )
    record = aggregate_pairwise([first, second], fmt)
    assert record["label"] == "tie"
    assert record["soft_score_a"] == pytest.approx(7.4 + 7.5 + 7.2 + 7.3)
    assert record["soft_score_b"] == pytest.approx(6.9 + 7.0 + 7.0 + 6.9)
    assert record["soft_label"] == "A"
    assert record["soft_referee_labels"] == {"Critic": "A", "Reader": "A"}
    row = record["orders"][1]["referees"][0]
    assert row["soft_score_a"] == pytest.approx(7.2) and row["distributions"][1]["expected"] == 7.2
    by_position = position_stats([record])["soft_mean_by_position"]
    assert by_position["first"] == pytest.approx((7.4 + 7.5 + 7.0 + 6.9) / 4)
    assert by_position["second"] == pytest.approx((6.9 + 7.0 + 7.2 + 7.3) / 4)


def test_soft_ties_are_ties_and_a_referee_without_distributions_leaves_no_soft_label() -> None:
    fmt = PairwiseFormat()
    same = (spread({6: 0.5, 8: 0.5}), spread({8: 0.5, 6: 0.5}))
    record = aggregate_pairwise(
        [_pairwise_debate(False, [_verdict("Critic", 0, "Assistant 1: 6\nAssistant 2: 8", same)])], fmt
    )
    assert record["label"] == "B" and record["soft_label"] == "tie"
    partial = aggregate_pairwise(
        [
            _pairwise_debate(
                False,
                [
                    _verdict("Critic", 0, "Assistant 1: 6\nAssistant 2: 8", same),
                    _verdict("Reader", 1, "Assistant 1: 6\nAssistant 2: 8", None),
                ],
            )
        ],
        fmt,
    )
    assert partial["label"] == "B" and "soft_label" not in partial


def test_soft_direct_scores_are_the_mean_of_expected_scores() -> None:
    fmt = DirectFormat([Dimension("coherence", "", 1, 3), Dimension("groundedness", "", 0, 1)])
    text = "Coherence: 2\nGroundedness: 1"
    debate = Debate(
        "r1",
        DirectItem("r1", "ctx", "resp", scores={"coherence": 2.0}),
        transcript=Transcript(
            (
                _verdict("Critic", 0, text, (spread({2: 0.5, 3: 0.5}), spread({1: 0.8, 0: 0.2}))),
                _verdict("Reader", 1, text, (point(2), spread({1: 0.6, 0: 0.4}))),
            )
        ),
    )
    record = aggregate_direct(debate, fmt)
    assert record["scores"] == {"coherence": 2.0, "groundedness": 1.0}
    assert record["soft_scores"] == pytest.approx({"coherence": 2.25, "groundedness": 0.7})
    assert record["referees"][0]["distributions"]["groundedness"]["expected"] == 0.8


_ITEM_NUMBERS = itertools.count(1)


def _labelled(label: str, soft_label: str | None, human: str) -> dict[str, object]:
    record: dict[str, object] = {
        "item_id": f"item {next(_ITEM_NUMBERS)}",  # compare_records pairs items by id
        "orders": [{"swapped": False, "label": label, "referees": []}],
        "label": label,
        "referee_labels": {"Critic": label},
        "human_label": human,
        "parse_failures": 0,
        "excluded_referees": [],
    }
    if soft_label is not None:
        record.update(soft_label=soft_label, soft_referee_labels={"Critic": soft_label})
    return record


def test_metrics_report_hard_and_soft_side_by_side_with_tie_shares() -> None:
    config = tiny_config()
    records = [
        _labelled("tie", "A", "A"),
        _labelled("tie", "B", "A"),
        _labelled("A", "A", "A"),
        _labelled("tie", "tie", "B"),
    ]
    metrics = compute_metrics(statistics_settings(config), records)
    hard, soft = metrics["aggregations"]["hard"], metrics["aggregations"]["soft"]
    assert hard["tie_share"] == 0.75 and soft["tie_share"] == 0.25
    assert hard["panel"]["accuracy"]["value"] == 0.25 and soft["panel"]["accuracy"]["value"] == 0.5
    assert "ci95" in soft["panel"]["kappa"] and soft["referees"]["Critic"]["n"] == 4
    assert metrics["aggregation"] == "hard" and metrics["panel"] == hard["panel"]
    assert metrics["soft_verdicts"] == "read"
    chosen = compute_metrics(statistics_settings(tiny_config(verdict={"aggregation": "soft"})), records)
    assert chosen["aggregation"] == "soft" and chosen["panel"] == soft["panel"]


def test_soft_metrics_are_absent_not_zero_when_no_verdict_has_probabilities() -> None:
    records = [_labelled("A", None, "A"), _labelled("tie", None, "B")]
    metrics = compute_metrics(statistics_settings(tiny_config(verdict={"aggregation": "soft"})), records)
    assert "soft" not in metrics["aggregations"]
    assert metrics["soft_verdicts"].startswith("unavailable")
    assert metrics["aggregation"] == "hard" and metrics["panel"]["n"] == 2
    off = compute_metrics(statistics_settings(tiny_config(verdict={"soft": False})), records)
    assert off["soft_verdicts"].startswith("off")


def test_soft_aggregation_needs_soft_verdicts_on() -> None:
    with pytest.raises(ConfigError, match="aggregation: soft needs soft: true"):
        tiny_config(verdict={"soft": False, "aggregation": "soft"})


# --- through a whole run -------------------------------------------------------------------


def _scripted_scores(request: GenerationRequest) -> str | GenerationResult:
    """Discussion text, or a score block whose every score has a hand-built distribution."""
    if not asks_for_scores(request):
        return "I think the first answer is more complete."
    text = "\nAssistant 1: 7\nAssistant 2: 7"
    positions = {i: {"7": 0.6, "8": 0.3, "1": 0.1} for i, c in enumerate(text) if c == "7"}
    assert request.probabilities_of == score_pieces([ONE_TO_TEN])
    return GenerationResult(text, 10, len(text), "stop", 0, char_tokens(text), at(text, positions))


def test_a_run_asks_for_probabilities_and_stores_distributions(tmp_path: Path) -> None:
    backend = ScriptedBackend("smollm2-135m", _scripted_scores)
    result = run(tiny_config(), tmp_path / "run", backends={"smollm2-135m": backend})
    scored = [r for call in backend.calls for r in call if asks_for_scores(r)]
    unscored = [r for call in backend.calls for r in call if not asks_for_scores(r)]
    assert scored and all(r.probabilities_of for r in scored)
    assert all(not r.probabilities_of for r in unscored)
    records = read_jsonl(tmp_path / "run" / "verdicts.jsonl")
    row = records[0]["orders"][0]["referees"][0]
    # "1" was not taken: its mass goes to 10, the value it begins nearest the decoded 7.
    assert row["distributions"][0]["probabilities"] == {"7": 0.6, "8": 0.3, "10": 0.1}
    assert row["distributions"][0]["ambiguous"] == 0.1
    assert records[0]["label"] == "tie" and records[0]["soft_label"] == "tie"
    assert result.metrics is not None and result.metrics["aggregations"]["soft"]["tie_share"] == 1.0
    assert result.metrics["aggregations"]["soft"]["mean_ambiguous"] == pytest.approx(0.1)


def test_a_backend_without_probabilities_gives_hard_verdicts_only(tmp_path: Path) -> None:
    def words(request: GenerationRequest) -> str:
        return "\nAssistant 1: 7\nAssistant 2: 6" if asks_for_scores(request) else "Fine."

    backend = ScriptedBackend("smollm2-135m", words)
    result = run(tiny_config(), tmp_path / "run", backends={"smollm2-135m": backend})
    assert result.metrics is not None
    assert "soft" not in result.metrics["aggregations"]
    assert result.metrics["soft_verdicts"].startswith("unavailable")
    assert result.metrics["aggregations"]["hard"]["items_scored"] == 2


def test_the_journal_keeps_distributions_for_resume(tmp_path: Path) -> None:
    dist = (ScoreDistribution({7: 0.75, 8: 0.25}, ambiguous=0.05), point(7))
    utterance = _verdict("Critic", 0, "Assistant 1: 7\nAssistant 2: 7", dist)
    path = tmp_path / "journal.jsonl"
    append_step(path, 0, [("q1", utterance)], {})
    assert load(path).utterances["q1"] == [utterance]


def test_soft_is_compared_with_hard_on_the_same_items() -> None:
    records = [
        _labelled("tie", "A", "A"),
        _labelled("tie", "B", "A"),
        _labelled("A", "A", "A"),
        _labelled("tie", "tie", "B"),
    ]
    versus = compute_metrics(statistics_settings(tiny_config()), records)["soft_vs_hard"]
    assert versus["n"] == 4
    assert versus["accuracy"]["difference"]["value"] == 0.25  # soft 2 of 4, hard 1 of 4
    assert versus["mcnemar"] == {"a_only_right": 0, "b_only_right": 1, "p_value": 1.0}


def _soft_run(tmp_path: Path) -> Path:
    """A quickstart run on the scripted backend whose scores lean to the first answer shown."""

    def leaning(request: GenerationRequest) -> str | GenerationResult:
        if not asks_for_scores(request):
            return "A remark."
        text = "\nAssistant 1: 7\nAssistant 2: 7"
        first, second = text.index("7"), text.rindex("7")
        positions = {first: {"7": 0.5, "8": 0.5}, second: {"7": 0.9, "6": 0.1}}
        return GenerationResult(text, 10, len(text), "stop", 0, char_tokens(text), at(text, positions))

    outdir = tmp_path / "soft"
    run(tiny_config(), outdir, backends={"smollm2-135m": ScriptedBackend("smollm2-135m", leaning)})
    return outdir


def test_report_and_summary_show_hard_and_soft_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chateval.reporting.markdown import write_report
    from chateval.reporting.summary import print_summary
    from chateval.run.runner import RunResult

    outdir = _soft_run(tmp_path)
    text = write_report([outdir], tmp_path / "report").read_text()
    section = text.split("## Hard and soft verdicts (pairwise)")[1].split("\n## ")[0]
    # Hard: every verdict ties. Soft: the first answer shown leans up, the second down, in both
    # orders, so the sums tie again: each answer was shown first once.
    assert "| test | hard | 2 |" in section and "| test | soft | 2 |" in section
    assert "100.0% |" in section and "soft minus hard accuracy" in section
    metrics = json.loads((outdir / "metrics.json").read_text())
    info = json.loads((outdir / "run.json").read_text())
    print_summary(RunResult(outdir, info, metrics))
    out = capsys.readouterr().out
    assert "verdicts" in out and "hard" in out and "soft" in out and "ties" in out
    assert (
        "soft verdicts: 16 scores read with their probabilities" in out
        and "soft minus hard, same items" in out
    )
    assert "mean soft score of the answer shown first 7.50, shown second 6.90" in out


def test_an_empty_token_before_a_score_does_not_hide_it() -> None:
    """A token that decodes to nothing (a partial byte) at the score's start is skipped."""
    text = "\nAssistant 1: 7"
    start = text.index("7")
    ends = (*range(1, start + 1), start, start + 1)  # one extra, empty token right before "7"
    probs = tuple({"7": 1.0} if k == len(ends) - 1 else {} for k in range(len(ends)))
    dist = read_score(text, (start, start + 1), ends, probs, ONE_TO_TEN)
    assert dist.probabilities == {7: 1.0}


class _Vocabulary:
    """The parts of a Hugging Face tokenizer that the start-up check reads."""

    all_special_ids: list[int] = []
    added_tokens_decoder: dict[int, object] = {}

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens

    def get_vocab(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def decode(self, ids: list[int]) -> str:
        return "".join(self.tokens[i] for i in ids)


class _VocabularyBackend(ScriptedBackend, HFTokenCounting):
    """A scripted backend with a tokenizer, so a run checks its vocabulary before it starts."""

    def __init__(self, tokens: list[str]) -> None:
        super().__init__("smollm2-135m", lambda request: "A remark.")
        self.tokenizer = _Vocabulary(tokens)


def test_a_run_refuses_a_model_whose_scores_cannot_be_read_before_any_request(tmp_path: Path) -> None:
    backend = _VocabularyBackend([*"0123456789", " 7", "Ass", "istant"])
    with pytest.raises(ConfigError, match="model 'smollm2-135m'.*' 7'"):
        run(tiny_config(), tmp_path / "run", backends={"smollm2-135m": backend})
    assert backend.calls == []
    readable = _VocabularyBackend([*"0123456789", "Ass", "istant"])
    run(tiny_config(verdict={"soft": False}), tmp_path / "off", backends={"smollm2-135m": backend})
    run(tiny_config(), tmp_path / "fine", backends={"smollm2-135m": readable})


def test_the_report_reads_runs_made_before_soft_verdicts(tmp_path: Path) -> None:
    """Older metrics.json files have the hard metrics at the top level and no aggregations."""
    from chateval.reporting.markdown import write_report

    current = _soft_run(tmp_path / "current")
    older = _soft_run(tmp_path / "older")
    metrics = json.loads((older / "metrics.json").read_text())
    old = {k: v for k, v in metrics.items() if k not in ("aggregations", "soft_verdicts", "soft_vs_hard")}
    (older / "metrics.json").write_text(json.dumps(old))
    report = write_report([current, older], tmp_path / "report").read_text()
    section = report.split("## Hard and soft verdicts")[1].split("\n## ")[0]
    assert section.count("| test | hard | 2 |") == 2  # both runs are named "test"
    assert section.count("| test | soft | 2 |") == 1 and "| test | soft | not recorded |" in section
