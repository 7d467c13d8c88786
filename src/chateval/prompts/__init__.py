"""Prompt rendering: Jinja templates and the referee role library (our own wording).

Prompt layouts (the same task and the same visible discussion, framed differently; they
differ in what an engine with prefix caching can reuse):

- ``conversation`` (default): the debate is one growing chat. The first user message holds the
  panel's rules (every referee's brief, how to speak, the verdict form: the same for every
  item), then the task; every utterance is an assistant message, preceded by the short user
  message that asked its speaker to talk; a summary is shown as user-side text. In one-by-one
  talk a turn's prompt therefore starts with the previous request's whole text, prompt and
  answer, already in the engine's cache: only the new short request is computed.
- ``shared_first``: one user message; task, discussion so far, then the speaker's role and
  instruction. Agents and rounds reuse the task prefix, but every new utterance and the role
  text are computed again for each request.
- ``role_first``: the speaker's part first (the order naive implementations use), kept to
  measure what the other layouts buy.
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
from chateval.debate.transcript import Utterance
from chateval.errors import ConfigError
from chateval.verdicts import Dimension


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


PromptLayout = Literal["conversation", "shared_first", "role_first"]
PROMPT_LAYOUTS: tuple[PromptLayout, ...] = get_args(PromptLayout)


class PromptBuilder:
    """Builds the chat messages of agent turns and summarizer turns for one task.

    ``verdict_form`` is the verdict format's answer template. ``roster`` is the panel's (speaker
    name, role description) pairs in speaking order; the conversation layout states them, the
    discussion rule and the verdict form once up front, so each turn's request only names its
    speaker and what is asked.
    """

    def __init__(
        self,
        verdict_form: str,
        dimensions: Sequence[Dimension] = (),
        layout: PromptLayout = "conversation",
        roster: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.verdict_form = verdict_form
        self.dimensions = list(dimensions)
        self.layout = layout
        # One line per referee in the rules, whatever line breaks a custom brief has.
        self.roster = [(name, " ".join(brief.split())) for name, brief in roster]
        if layout == "conversation" and not self.roster:
            raise ValueError("the conversation layout needs the panel's roster")
        self.system = _render("system.j2").strip()
        # The conversation layout's rules are the same for every item and turn: rendered once.
        self.rules = _render("panel_rules.j2", roster=self.roster, verdict_form=verdict_form).strip()

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
        role: Role,
        agent_name: str,
        visible: Sequence[Utterance],
        final: bool,
        swapped: bool = False,
    ) -> tuple[ChatMessage, ...]:
        """Messages for a referee's turn, in this builder's layout."""
        if self.layout == "conversation":
            if all(agent_name != name for name, _ in self.roster):
                raise ValueError(f"{agent_name!r} is not on the panel roster of the conversation layout")
            return self._conversation(item, swapped, visible, self._ask(agent_name, final))
        shared = self.task_block(item, swapped) + "\n" + _render("discussion.j2", discussion=visible)
        own = _render(
            "turn.j2",
            agent_name=agent_name,
            role_description=role.description,
            final=final,
            verdict_form=self.verdict_form,
        )
        body = own.strip() + "\n\n" + shared if self.layout == "role_first" else shared + own
        return (ChatMessage("system", self.system), ChatMessage("user", body.strip()))

    def summarizer_messages(
        self, item: Item, visible: Sequence[Utterance], swapped: bool = False
    ) -> tuple[ChatMessage, ...]:
        """Messages for the summarizer: the task, the discussion to condense, the instruction."""
        if self.layout == "conversation":
            return self._conversation(item, swapped, visible, _render("summarizer.j2").strip())
        body = (
            self.task_block(item, swapped)
            + "\n"
            + _render("discussion.j2", discussion=visible)
            + _render("summarizer.j2")
        )
        return (ChatMessage("system", self.system), ChatMessage("user", body.strip()))

    @staticmethod
    def _ask(speaker: str, final: bool) -> str:
        """The conversation layout's short request that asks ``speaker`` to talk (or judge)."""
        return _render("ask.j2", agent_name=speaker, final=final).strip()

    def _conversation(
        self, item: Item, swapped: bool, visible: Sequence[Utterance], ask: str
    ) -> tuple[ChatMessage, ...]:
        """The debate as one chat: rules and task, then (request, utterance) pairs, then ``ask``.

        A referee's utterance follows the short request its speaker answered, as the answer to
        it; a summary (which no referee said) is user-side text. So in one-by-one talk a prompt
        begins with the whole text, prompt plus answer, of the request before it.
        """
        # The panel's rules come before the task: the same for every item, so they stay cached.
        pending = self.rules + "\n\n" + self.task_block(item, swapped).strip() + "\n\n"
        messages = [ChatMessage("system", self.system)]
        for utterance in visible:
            if utterance.kind == "summary":
                pending += _render("summary.j2", summary=utterance.text).strip() + "\n\n"
                continue
            pending += self._ask(utterance.speaker, utterance.kind in ("verdict", "probe"))
            messages += [ChatMessage("user", pending.strip()), ChatMessage("assistant", utterance.text)]
            pending = ""
        messages.append(ChatMessage("user", (pending + ask).strip()))
        return tuple(messages)
