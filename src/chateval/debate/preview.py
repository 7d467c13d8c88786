"""What each referee is asked, before any model runs (``chateval preview``).

A debate of one item, in one answer order, is walked through the panel's plan exactly as a
run walks it (``Panel.due``, ``Panel.request``, ``Panel.advance``), but every answer is a
placeholder that says whose words would stand there ("<what Critic says in round 1>"). So the
messages shown are the messages a run sends, with the placeholders where earlier utterances
go, in the form the layout quotes the discussion in ("[Name]: ..." in the paper layout).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chateval.core.backend import ChatMessage, GenerationRequest, GenerationResult
from chateval.core.items import Item
from chateval.core.transcript import SUMMARIZER, Debate, Turn
from chateval.debate.building import build_debates
from chateval.debate.panel import Panel
from chateval.errors import ConfigError


@dataclass(frozen=True)
class PreviewRequest:
    """One request of the previewed debate: who is asked, at which turn, and with what."""

    agent: str
    turn: Turn
    messages: tuple[ChatMessage, ...]
    max_tokens: int
    constraint: str | None  # the regular expression the answer is held to
    scores: bool = False  # it writes a verdict's constrained score lines
    model: str = ""  # the model that answers it

    @property
    def kind(self) -> str:
        """discussion, summary, assessment (a verdict's free text) or scores, with ``probe`` /
        ``check`` in front for the hidden verdicts of opinion probes and early stopping."""
        if self.turn.is_summary:
            return "summary"
        if not self.turn.gives_verdict:
            return "discussion"
        part = "scores" if self.scores else "assessment"
        return part if self.turn.kind == "verdict" else f"{self.turn.kind} {part}"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of ``chateval preview --json``."""
        return {
            "agent": self.agent,
            "turn": {"round": self.turn.round + 1, "kind": self.turn.kind, "scoring": self.turn.scoring},
            "kind": self.kind,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "max_tokens": self.max_tokens,
            "constraint": self.constraint,
        }


def placeholder(panel: Panel, turn: Turn) -> str:
    """The text standing in for what the speaker of ``turn`` would say."""
    assert turn.agent is not None  # only an old run's summaries have none
    name = panel.agents[turn.agent].name
    if turn.is_summary:
        return f"<the summary for {name} after round {turn.round + 1}>"
    if not turn.gives_verdict:
        return f"<what {name} says in round {turn.round + 1}>"
    what = "scores" if panel.constrained(turn) else "assessment"
    hidden = "" if turn.kind == "verdict" else f" ({turn.kind}, round {turn.round + 1})"
    return f"<{name}'s {what}{hidden}>"


def walk_requests(panel: Panel, debate: Debate) -> list[tuple[Turn, GenerationRequest]]:
    """Every request of ``debate`` with its turn, in the order a run sends them, each answered
    by a placeholder; ``debate`` itself is left as it is (a fresh copy of it is walked)."""
    walked = Debate(debate.key, debate.item, debate.swapped)
    requests: list[tuple[Turn, GenerationRequest]] = []
    for step in panel.plan():
        turns = panel.due(walked, step)
        requests += [(turn, panel.request(walked, turn)) for turn in turns]
        results = [GenerationResult(placeholder(panel, turn), 0, 0, "stop") for turn in turns]
        panel.advance(walked, step, turns, results)
    return requests


def preview_debate(panel: Panel, debate: Debate) -> list[PreviewRequest]:
    """Every request of ``debate`` in the order a run sends them, answered by placeholders."""
    requests: list[PreviewRequest] = []
    for turn, request in walk_requests(panel, debate):
        assert turn.agent is not None
        agent = panel.agents[turn.agent].name
        if turn.is_summary:
            agent = f"{SUMMARIZER.capitalize()} for {agent}"
        requests.append(
            PreviewRequest(
                agent,
                turn,
                request.messages,
                request.max_tokens,
                request.regex,
                panel.constrained(turn),
                request.model,
            )
        )
    return requests


def preview(
    items: Sequence[Item], panel: Panel, source: str, item_id: str | None = None, swapped: bool = False
) -> list[PreviewRequest]:
    """The requests of the debate of item ``item_id`` of ``items`` (default: the first), read
    from ``source``, with answer B shown first when ``swapped``. Items are shown as loaded: a
    run may cut an item's texts to fit a model's context (it says so before it starts)."""
    if not items:
        raise ConfigError(f"{source}: no items to preview")
    chosen = items[0] if item_id is None else next((i for i in items if i.id == item_id), None)
    if chosen is None:
        shown = ", ".join(i.id for i in items[:10]) + (", ..." if len(items) > 10 else "")
        raise ConfigError(f"--item {item_id!r}: no such item in {source} (ids: {shown})")
    debates = build_debates([chosen], position_calibration=swapped)
    return preview_debate(panel, debates[-1])


def render(requests: Sequence[PreviewRequest]) -> str:
    """The preview as text: one block per request, its messages with their roles."""
    blocks = []
    for number, request in enumerate(requests, 1):
        head = (
            f"=== request {number}: {request.agent}, round {request.turn.round + 1}, {request.kind}"
            f" (at most {request.max_tokens} tokens) ==="
        )
        lines = [head]
        for message in request.messages:
            continues = (
                " (the reply continues this text)"
                if message is request.messages[-1] and message.role == "assistant"
                else ""
            )
            empty = " (empty)" if not message.content else ""
            lines += [f"--- {message.role}{empty}{continues} ---", message.content]
        if request.constraint is not None:
            lines.append(f"--- constraint (regular expression) ---\n{request.constraint!r}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
