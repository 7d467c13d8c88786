"""How the HTML report shows one debate: its rounds, its hidden turns and each referee's
verdict, from a run's transcript and verdict records, and how the panel decided over its
debates (plain values; the templates escape)."""

from collections.abc import Sequence
from dataclasses import dataclass

from chateval.core.formatting import cut_fields_text
from chateval.evaluation.diagnostics.text import EMPTY_ASSESSMENT
from chateval.schema.transcripts import TranscriptMessage
from chateval.schema.verdicts import RefereeRow, VerdictRecord


@dataclass(frozen=True)
class Message:
    """One utterance as the page shows it."""

    speaker: str
    detail: str  # role and model
    label: str  # what it is: discussion, assessment, scores, summary ...
    text: str
    finish_reason: str
    tokens: int | None
    summary: bool


@dataclass(frozen=True)
class Round:
    title: str
    messages: list[Message]


@dataclass(frozen=True)
class Histogram:
    """A referee's probabilities over one score's values: bars of a tiny inline chart."""

    name: str
    bars: list[tuple[str, float]]  # (value, probability)
    expected: str


@dataclass(frozen=True)
class RefereeView:
    agent: str
    cells: list[str]
    histograms: list[Histogram]
    opinions: str
    error: str


@dataclass(frozen=True)
class DebateView:
    """One debate of one run: an item in one answer order."""

    run: str
    title: str
    rounds: list[Round]
    hidden: list[Message]  # opinion probes and early-stop checks, which nobody saw
    columns: list[str]
    referees: list[RefereeView]
    stopped_early: bool


def number_text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "" if value is None else str(value)


def _histograms(row: RefereeRow, names: Sequence[str], scales: Sequence[range]) -> list[Histogram]:
    """Each score's distribution over its whole scale (values it gave no mass stay at 0)."""
    found = row.get("distributions")
    if not found:
        return []
    listed = list(found.values()) if isinstance(found, dict) else list(found)
    out = []
    for name, scale, d in zip(names, scales, listed, strict=False):
        probabilities = {str(k): float(v) for k, v in (d.get("probabilities") or {}).items()}
        bars = [(str(v), probabilities.get(str(v), 0.0)) for v in scale]
        out.append(Histogram(name, bars, number_text(d.get("expected"))))
    return out


def _opinions(row: RefereeRow, final: str) -> str:
    """A referee's probe verdicts over the rounds, then its final one."""
    found = row.get("opinions")
    if not found:
        return ""
    steps = []
    for index, opinion in enumerate(found):
        when = "before discussion" if index == 0 else f"after round {index}"
        said = ", ".join(f"{k} {v}" for k, v in opinion.items()) if isinstance(opinion, dict) else opinion
        steps.append(f"{when}: {'unparsed' if said is None else said}")
    return " → ".join([*steps, f"final: {final}"])


def _error_text(row: RefereeRow) -> str:
    """A referee's parse failure and the text that failed ("" when its verdict parsed)."""
    return f"{row['error']} (raw: {row.get('raw', '')})" if row.get("error") else ""


def pairwise_referee(row: RefereeRow, swapped: bool, scale: range) -> RefereeView:
    # Distributions are in the order shown: with the answers swapped, B's comes first.
    names = ["B", "A"] if swapped else ["A", "B"]
    histograms = sorted(_histograms(row, names, [scale, scale]), key=lambda h: h.name)
    cells = [
        number_text(row.get("score_a")),
        number_text(row.get("score_b")),
        number_text(row.get("soft_score_a")),
        number_text(row.get("soft_score_b")),
        number_text(row.get("winner")),
    ]
    opinions = _opinions(row, number_text(row.get("winner")))
    return RefereeView(str(row["agent"]), cells, histograms, opinions, _error_text(row))


def direct_referee(row: RefereeRow, dims: Sequence[str], scales: Sequence[range]) -> RefereeView:
    scores, soft = row.get("scores") or {}, row.get("soft_scores") or {}
    cells = [
        f"{number_text(scores.get(d))}" + (f" ({number_text(soft[d])})" if d in soft else "") for d in dims
    ]
    final = ", ".join(f"{d} {scores[d]}" for d in dims if d in scores) or "unparsed"
    histograms = _histograms(row, dims, scales)
    return RefereeView(str(row["agent"]), cells, histograms, _opinions(row, final), _error_text(row))


def _message_label(message: TranscriptMessage) -> str:
    kind, turn = message.get("kind"), message.get("turn")
    if kind == "summary":
        after = f"round {int(message.get('round', 0)) + 1}"
        referee = message.get("for_referee")
        return f"summary for {referee} after {after}" if referee else f"summary of {after}"
    what = "scores" if kind in ("verdict", "probe") else str(kind)
    if turn == "probe":
        return f"opinion probe: {what}"
    if turn == "check":
        return f"early-stop check: {what}"
    return what


def _text(message: TranscriptMessage) -> str:
    """What an utterance said; an empty assessment (the referee began with its scores, which
    were cut off for the constrained request to write) says so instead of showing nothing."""
    text = str(message.get("text", ""))
    if message.get("kind") == "assessment" and not text.strip():
        return EMPTY_ASSESSMENT
    return text


def _hidden_title(round_: int) -> str:
    """Hidden verdicts are asked as of the start of a round (0: before any discussion)."""
    return "before any discussion" if round_ == 0 else f"after round {round_}"


def debate_view(
    run: str,
    title_of_debate: str,
    messages: Sequence[TranscriptMessage],
    referees: list[RefereeView],
    columns: list[str],
    speakers: dict[str, tuple[str, str]],
) -> DebateView:
    """A debate's visible rounds in order, and its hidden verdicts apart. The early-stop
    check that ended a debate is no longer hidden: its answers are the referees' verdicts."""
    ending = {m.get("round") for m in messages if m.get("kind") == "verdict" and m.get("turn") == "check"}
    rounds: list[Round] = []
    hidden: list[Message] = []
    for m in messages:
        role, model = speakers.get(str(m.get("speaker")), ("", ""))
        round_ = int(m.get("round", 0))
        ended_it = m.get("turn") == "check" and m.get("round") in ending
        is_hidden = bool(m.get("probe")) and not ended_it
        label = _message_label(m)
        if is_hidden:
            label += f" ({_hidden_title(round_)})"
        shown = Message(
            speaker=str(m.get("speaker")),
            detail=" · ".join(x for x in (role if role != m.get("speaker") else "", model) if x),
            label=label,
            text=_text(m),
            finish_reason=str(m.get("finish_reason") or ""),
            tokens=m.get("tokens"),
            summary=m.get("kind") == "summary",
        )
        if is_hidden:
            hidden.append(shown)
            continue
        title = f"Early stop: unanimous after round {round_}" if ended_it else f"Round {round_ + 1}"
        if not rounds or rounds[-1].title != title:
            rounds.append(Round(title, []))
        rounds[-1].messages.append(shown)
    return DebateView(run, title_of_debate, rounds, hidden, columns, referees, bool(ending))


def truncation_text(record: VerdictRecord) -> str:
    """Which inputs of an item were cut to fit each model's context, in words."""
    cuts = record.get("truncated") or {}
    return "; ".join(f"{model}: {cut_fields_text(fields)}" for model, fields in cuts.items())


def debated_decision(record: VerdictRecord, orders: int) -> str:
    """How a debating panel's label was reached over its ``orders`` answer orders
    (chateval.judging.aggregate)."""
    if orders > 1:
        text = (
            f"Both answer orders: each answer's scores summed over orders and referees, "
            f"A {number_text(record.get('score_a'))} against B {number_text(record.get('score_b'))}; "
            "the larger sum wins, equal sums tie."
        )
    else:
        labels = ", ".join(f"{k} {v}" for k, v in (record.get("referee_labels") or {}).items())
        text = f"A strict majority of the referees' labels ({labels}), else a tie."
    if record.get("soft_label"):
        text += (
            f" Soft: expected scores summed the same way, A {number_text(record.get('soft_score_a'))} "
            f"against B {number_text(record.get('soft_score_b'))}: {record['soft_label']}."
        )
    if record.get("excluded_referees"):
        text += f" Left out (failed to parse): {', '.join(record['excluded_referees'])}."
    truncation = truncation_text(record)
    return text + (f" Inputs cut to fit the context: {truncation}." if truncation else "")
