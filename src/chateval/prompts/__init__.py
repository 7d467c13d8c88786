"""Prompt rendering: Jinja templates and the referee role library (our own wording).

What every layout gives a referee at its turn (as ChatEval's prompts do): the task; the
discussion it may see, every utterance under its speaker's name ("Critic: ..."); its own
persona and the turn's instruction (talk, or the verdict instruction in its last round); and
the system prompt's rule that a referee forms its own judgement and need not give the same
scores as the others. Its answer continues a lead with its own name, so the model speaks as
that referee and the text it writes is, token for token, how later turns show it.

Prompt layouts (the same task and the same visible discussion, framed differently; they
differ in what an engine with prefix caching can reuse):

- ``conversation`` (default): the debate is one growing chat. The first user message names
  the panel's referees (the same for every item), then the task; every utterance is an
  assistant message, preceded by the user message that asked its speaker to talk (its persona
  and instruction); a summary is shown as user-side text. In one-by-one talk a turn's prompt
  therefore starts with the previous request's whole text, prompt and answer, already in the
  engine's cache: only the new request is computed.
- ``shared_first``: one user message; task, discussion so far, then the speaker's role and
  instruction. Agents and rounds reuse the task prefix, but every new utterance and the role
  text are computed again for each request.
- ``role_first``: the speaker's part first (the order naive implementations use), kept to
  measure what the other layouts buy.
- ``compact``: the conversation layout as it was before personas were restated at each turn:
  every referee's brief in the shared rules, a short "You are Critic. Speak now." at each turn,
  answers without the speaker's name. Fewer tokens per turn, weaker personas; kept to measure
  what the faithful layout costs.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

import jinja2
import yaml

from chateval.backends.base import ChatMessage
from chateval.data.items import DirectItem, Item, PairwiseItem
from chateval.errors import ConfigError
from chateval.transcript import Utterance
from chateval.verdicts import Dimension, scoring_lead, verdict_text


@dataclass(frozen=True)
class Role:
    """A referee persona."""

    name: str
    description: str


@cache
def role_library() -> dict[str, Role]:
    """The built-in personas of roles.yaml, by key."""
    text = resources.files("chateval.prompts").joinpath("roles.yaml").read_text(encoding="utf-8")
    raw: dict[str, dict[str, str]] = yaml.safe_load(text)
    return {key: Role(name=v["name"], description=v["description"]) for key, v in raw.items()}


def get_role(key: str) -> Role:
    """The library role ``key``; ConfigError lists the known keys."""
    library = role_library()
    if key not in library:
        raise ConfigError(f"unknown role {key!r}; known: {', '.join(sorted(library))}")
    return library[key]


@cache
def _environment() -> jinja2.Environment:
    loader = jinja2.PackageLoader("chateval.prompts", "templates")
    return jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,  # plain-text prompts, never HTML
    )


def _render(name: str, **context: Any) -> str:
    return _environment().get_template(name).render(**context)


PromptLayout = Literal["conversation", "shared_first", "role_first", "compact"]
PROMPT_LAYOUTS: tuple[PromptLayout, ...] = get_args(PromptLayout)


@dataclass(frozen=True)
class Said:
    """One thing a listener is shown: who said it, the text, and in answer to what."""

    speaker: str
    text: str
    kind: Literal["discussion", "verdict", "summary"]


def spoken(visible: Sequence[Utterance]) -> list[Said]:
    """What a listener is shown for ``visible``, oldest first.

    A reasoned verdict is two utterances (the assessment, then the scores that continue it);
    a listener sees them as the one answer they form.
    """
    scores = {u.turn: u for u in visible if u.turn.scoring}
    said: list[Said] = []
    for utterance in visible:
        if utterance.turn.scoring:
            continue  # shown with its assessment
        if utterance.kind == "summary":
            said.append(Said(utterance.speaker, utterance.text, "summary"))
        elif utterance.kind == "discussion":
            said.append(Said(utterance.speaker, utterance.text, "discussion"))
        elif utterance.kind == "assessment" and utterance.turn.scored() in scores:
            text = verdict_text(utterance.text, scores[utterance.turn.scored()].text)
            said.append(Said(utterance.speaker, text, "verdict"))
        else:  # an unreasoned verdict (or an assessment whose scores are not shown)
            said.append(Said(utterance.speaker, utterance.text, "verdict"))
    return said


class PromptBuilder:
    """Builds the chat messages of agent turns and summarizer turns for one task.

    ``verdict_instruction`` is what the verdict format asks of a referee at its verdict turn.
    ``roster`` is the panel's (speaker name, persona) pairs in speaking order; a referee's own
    persona is restated at each of its turns, the conversation layout's rules name the panel.
    """

    def __init__(
        self,
        verdict_instruction: str,
        dimensions: Sequence[Dimension] = (),
        layout: PromptLayout = "conversation",
        roster: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.verdict_instruction = verdict_instruction
        self.dimensions = list(dimensions)
        self.layout = layout
        # One line per persona, whatever line breaks a custom description has.
        self.roster = {name: " ".join(persona.split()) for name, persona in roster}
        if layout in ("conversation", "compact") and not self.roster:
            raise ValueError(f"the {layout} layout needs the panel's roster")
        self.system = _render("system.j2").strip()
        # The conversation layouts' rules are the same for every item and turn: rendered once.
        if layout == "compact":
            self.rules = _render(
                "compact_rules.j2", roster=list(self.roster.items()), verdict_instruction=verdict_instruction
            ).strip()
        else:
            self.rules = _render("panel_rules.j2", names=", ".join(self.roster)).strip()

    def instruction_texts(self) -> list[str]:
        """Every instruction chateval writes into this panel's prompts (not the task's data):
        what a referee echoing its prompt would repeat."""
        texts = [self.system, self.rules, _render("summarizer.j2").strip()]
        texts += [self._turn(name, final) for name in self.roster for final in (False, True)]
        # The task's framing, without an item's text.
        texts += [self.task_block(PairwiseItem("", "", "", "")), self.task_block(DirectItem("", "", ""))]
        return texts

    def task_block(self, item: Item, swapped: bool = False) -> str:
        """The part every speaker of this item shares. ``swapped`` shows answer B first."""
        if isinstance(item, PairwiseItem):
            first, second = (item.answer_b, item.answer_a) if swapped else (item.answer_a, item.answer_b)
            return _render("pairwise.j2", item=item, answer_1=first, answer_2=second)
        assert isinstance(item, DirectItem)
        return _render("direct.j2", item=item, dimensions=self.dimensions)

    def agent_messages(
        self,
        item: Item,
        agent_name: str,
        visible: Sequence[Utterance],
        final: bool,
        swapped: bool = False,
        assessment: str | None = None,
    ) -> tuple[ChatMessage, ...]:
        """Messages for a referee's turn, in this builder's layout.

        The last message is the lead the referee's answer continues: its name, and for the
        scores of a reasoned verdict (``assessment`` set) its own assessment and ``Scores:``.
        """
        if agent_name not in self.roster:
            raise ValueError(f"{agent_name!r} is not on the panel roster")
        ask = self._turn(agent_name, final)
        if self.layout in ("conversation", "compact"):
            messages = self._conversation(item, swapped, visible, ask)
        else:
            shared = (
                self.task_block(item, swapped) + "\n" + _render("discussion.j2", discussion=spoken(visible))
            )
            body = ask + "\n\n" + shared if self.layout == "role_first" else shared + "\n" + ask
            messages = (ChatMessage("system", self.system), ChatMessage("user", body.strip()))
        lead = self._lead(agent_name, assessment)
        return messages + ((ChatMessage("assistant", lead),) if lead is not None else ())

    def _lead(self, speaker: str, assessment: str | None) -> str | None:
        """What the speaker's answer continues: its name (and its assessment before its scores).
        The compact layout names no speaker, so only its scores continue something."""
        if self.layout == "compact":
            return None if assessment is None else scoring_lead(assessment)
        return f"{speaker}:" if assessment is None else f"{speaker}: {scoring_lead(assessment)}"

    def summarizer_messages(
        self, item: Item, visible: Sequence[Utterance], swapped: bool = False
    ) -> tuple[ChatMessage, ...]:
        """Messages for the summarizer: the task, the discussion to condense, the instruction."""
        if self.layout in ("conversation", "compact"):
            return self._conversation(item, swapped, visible, _render("summarizer.j2").strip())
        body = (
            self.task_block(item, swapped)
            + "\n"
            + _render("discussion.j2", discussion=spoken(visible))
            + _render("summarizer.j2")
        )
        return (ChatMessage("system", self.system), ChatMessage("user", body.strip()))

    def _turn(self, speaker: str, final: bool) -> str:
        """A referee's turn: who it is (its persona) and what it is asked."""
        if self.layout == "compact":
            return _render("compact_ask.j2", agent_name=speaker, final=final).strip()
        return _render(
            "turn.j2",
            agent_name=speaker,
            role_description=self.roster[speaker],
            final=final,
            verdict_instruction=self.verdict_instruction,
        ).strip()

    def _conversation(
        self, item: Item, swapped: bool, visible: Sequence[Utterance], ask: str
    ) -> tuple[ChatMessage, ...]:
        """The debate as one chat: rules and task, then (request, utterance) pairs, then ``ask``.

        A referee's utterance follows the request its speaker answered, as the answer to it,
        under its name; a summary (which no referee said) is user-side text. So in one-by-one
        talk a prompt begins with the whole text, prompt plus answer, of the request before it.
        """
        # The panel's rules come before the task: the same for every item, so they stay cached.
        pending = self.rules + "\n\n" + self.task_block(item, swapped).strip() + "\n\n"
        messages = [ChatMessage("system", self.system)]
        for said in spoken(visible):
            if said.kind == "summary":
                pending += _render("summary.j2", summary=said.text).strip() + "\n\n"
                continue
            pending += self._turn(said.speaker, said.kind == "verdict")
            answer = said.text if self.layout == "compact" else f"{said.speaker}: {said.text}"
            messages += [ChatMessage("user", pending.strip()), ChatMessage("assistant", answer)]
            pending = ""
        messages.append(ChatMessage("user", (pending + ask).strip()))
        return tuple(messages)
