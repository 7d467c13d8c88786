"""Prompt rendering: Jinja templates and the referee role library (our own wording).

Prompt layout: what every agent of an item shares (task, question, answers) comes first, the
discussion so far next, and the agent-specific part (role, turn instruction) last, so that an
engine with prefix caching reuses the shared prefix across agents and rounds.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

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


PromptLayout = Literal["shared_first", "role_first"]


class PromptBuilder:
    """Builds the chat messages of agent turns and summarizer turns for one task.

    ``layout="role_first"`` puts the agent-specific part (role, turn instruction) before the
    shared task instead of after it: the same text in the order naive implementations use,
    kept to measure what the shared-first layout buys in prefix-cache hits.
    """

    def __init__(
        self,
        verdict_instruction: str,
        dimensions: Sequence[Dimension] = (),
        layout: PromptLayout = "shared_first",
    ) -> None:
        self.verdict_instruction = verdict_instruction
        self.dimensions = list(dimensions)
        self.layout = layout
        self.system = _render("system.j2").strip()

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
        """Messages for a referee's turn: shared task, discussion, then role and instruction."""
        shared = self.task_block(item, swapped) + "\n" + _render("discussion.j2", discussion=visible)
        own = _render(
            "turn.j2",
            agent_name=agent_name,
            role_description=role.description,
            final=final,
            verdict_instruction=self.verdict_instruction,
        )
        body = own.strip() + "\n\n" + shared if self.layout == "role_first" else shared + own
        return (ChatMessage("system", self.system), ChatMessage("user", body.strip()))

    def summarizer_messages(
        self, item: Item, visible: Sequence[Utterance], swapped: bool = False
    ) -> tuple[ChatMessage, ...]:
        """Messages for the summarizer: shared task, the discussion to condense, instruction."""
        body = (
            self.task_block(item, swapped)
            + "\n"
            + _render("discussion.j2", discussion=visible)
            + _render("summarizer.j2")
        )
        return (ChatMessage("system", self.system), ChatMessage("user", body.strip()))
