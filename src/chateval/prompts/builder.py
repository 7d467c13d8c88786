"""Prompt rendering: Jinja templates and the referee role library (our own wording).

What every layout gives a referee at its turn (as ChatEval's prompts do): the task; the
discussion it may see, every utterance under its speaker's name ("Critic: ..."); its own
persona and the turn's instruction (talk, or the verdict instruction in its last round). In
every layout a referee's own earlier words are the only text it is shown as its own
(assistant) messages: another referee's words are always quoted, under their speaker's name,
in a user message, so no referee reads the others' words as something it said itself.

Prompt layouts (the same task and the same visible discussion, framed differently; they
differ in how close they are to the paper and in what an engine with prefix caching can reuse):

- ``paper`` (default): as the paper's code built each turn (../shared/PAPER.md), in our words:
  ONE user message with the task (question and answers, or conversation, fact and response),
  the evaluation instruction and, on a panel, that other referees have the same task and must
  be discussed with; the discussion so far under a heading, a "[Name]: ..." line per utterance
  (the 2023 code's form); the speaker's own role ("you are now <Name>, one of the referees
  ..." and the role's job); "now it is your turn, <Name>, keep it short and clear" (nothing
  else in a discussion turn); and in its last turn only the verdict instruction (a thorough
  explanation first, free of bias and of the answers' order; then the scores; it need not give
  the others' scores; the strict format). No system prompt and no lead: the reply is the
  referee's own text (a model whose chat template would add a default system prompt is sent an
  empty one: chateval.core.chat_template). A panel of one (the paper's
  single-agent baseline) gets no word about other referees or a discussion, and no role line
  when its role has no description. Agents and rounds share the task prefix in the engine's
  cache; the discussion and the speaker's part are computed per request.
- ``conversation``: each referee's own chat. The first user message names the panel's
  referees (the same for every item), then the task; the referee's own utterances are
  assistant messages, each after the user message that asked for it (its persona and
  instruction); what the others said since is quoted in the next user message. A referee's
  turn therefore starts with the whole text (prompt and answer) of its own previous turn,
  already in the engine's cache.
- ``shared_first``: one user message after a system prompt; task, discussion so far, then
  the speaker's role and instruction.
- ``role_first``: the speaker's part first (the order naive implementations use), kept to
  measure what the other layouts buy.
- ``compact``: the conversation layout as it was before personas were restated at each turn:
  every referee's brief in the shared rules, a short "You are Critic. Speak now." at each turn,
  answers without the speaker's name. Fewer tokens per turn, weaker personas; kept to measure
  what the faithful layouts cost.

The layouts other than ``paper`` have the system prompt's rule that a referee forms its own
judgement, and their answers continue a lead with the speaker's own name.

Prompt styles: ``paper`` (default) says only what the paper's turns said; ``nudged`` adds what
an earlier release said beyond them (discussion turns: answer the other referees where you
disagree, do not give scores yet; the verdict: equal scores only if the answers are equally
good), kept to measure what those nudges change.

The summarizer (``simultaneous_summarizer``) works as in the paper's code: each referee has its
own, and before each of that referee's turns after its first, it is given the current summary
and every line the referee has seen (earlier summaries included), with no task text, and
returns a new summary, which joins that referee's discussion as a line from "Summarizer".
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import groupby
from typing import Any, Literal, get_args

import jinja2
import yaml

from chateval.core.backend import ChatMessage
from chateval.core.items import DirectItem, Item, PairwiseItem
from chateval.core.transcript import Turn, Utterance
from chateval.errors import ConfigError
from chateval.judging.assessment import scoring_lead, verdict_text
from chateval.judging.formats import DirectFormat, VerdictFormat


@dataclass(frozen=True)
class Role:
    """A referee persona. ``direct`` is its text for direct scoring where the pairwise one
    gives it a pairwise job (None: ``description`` in both tasks)."""

    name: str
    description: str
    direct: str | None = None

    def for_task(self, task: str) -> "Role":
        """The persona as a panel of ``task`` (pairwise or direct) gets it."""
        if task == "direct" and self.direct is not None:
            return Role(self.name, self.direct)
        return Role(self.name, self.description)


@cache
def role_library() -> dict[str, Role]:
    """The built-in personas of roles.yaml, by key."""
    text = resources.files("chateval.prompts").joinpath("roles.yaml").read_text(encoding="utf-8")
    raw: dict[str, dict[str, str]] = yaml.safe_load(text)
    return {
        key: Role(name=v["name"], description=v["description"], direct=v.get("direct"))
        for key, v in raw.items()
    }


def get_role(key: str, task: str = "pairwise") -> Role:
    """The library role ``key`` as a panel of ``task`` gets it; ConfigError lists the known keys."""
    library = role_library()
    if key not in library:
        raise ConfigError(f"unknown role {key!r}; known: {', '.join(sorted(library))}")
    return library[key].for_task(task)


@cache
def _environment() -> jinja2.Environment:
    loader = jinja2.PackageLoader("chateval.prompts", "templates")
    return jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,  # plain-text prompts, never HTML
        # The templates ship with the package: no file check at every turn's render (a run
        # renders thousands of prompts, and checking each template's mtime was a tenth of it).
        auto_reload=False,
    )


def _render(name: str, **context: Any) -> str:
    return _environment().get_template(name).render(**context)


def _earlier_block(item: PairwiseItem, swapped: bool) -> str:
    """The conversation before the judged turn (empty for a one-turn item), each turn's replies
    in the order the answers are shown: Assistant 1 is the answer shown first."""
    if not item.earlier:
        return ""
    turns = [
        {
            "question": t.question,
            "first": t.answer_b if swapped else t.answer_a,
            "second": t.answer_a if swapped else t.answer_b,
        }
        for t in item.earlier
    ]
    return _render("earlier.j2", turns=turns, left_out=item.earlier_left_out)


SeenAt = Callable[[Turn], Sequence[Utterance]]
"""What a referee saw at one of its turns."""

PromptLayout = Literal["paper", "conversation", "shared_first", "role_first", "compact"]
PROMPT_LAYOUTS: tuple[PromptLayout, ...] = get_args(PromptLayout)
PromptStyle = Literal["paper", "nudged"]
PROMPT_STYLES: tuple[PromptStyle, ...] = get_args(PromptStyle)
# The nudged style's verdict rule, in every layout (the paper layout's template has it too).
_EQUAL_SCORES_RULE = "A higher score means a better answer; give equal scores only if they are equally good."


@dataclass(frozen=True)
class Said:
    """One thing a listener is shown: who said it, the text, and in answer to what."""

    speaker: str
    text: str
    kind: Literal["discussion", "verdict", "summary"]
    turn: Turn  # the turn that said it (a verdict's: its assessment's)


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
            said.append(Said(utterance.speaker, utterance.text, "summary", utterance.turn))
        elif utterance.kind == "discussion":
            said.append(Said(utterance.speaker, utterance.text, "discussion", utterance.turn))
        elif utterance.kind == "assessment" and utterance.turn.scored() in scores:
            text = verdict_text(utterance.text, scores[utterance.turn.scored()].text)
            said.append(Said(utterance.speaker, text, "verdict", utterance.turn))
        else:  # an unreasoned verdict (or an assessment whose scores are not shown)
            said.append(Said(utterance.speaker, utterance.text, "verdict", utterance.turn))
    return said


class PromptBuilder:
    """Builds the chat messages of agent turns and summarizer turns for one task.

    ``verdict_format`` gives what a referee is asked at its verdict turn (its answer form and
    scale). ``roster`` is the panel's (speaker name, persona) pairs in speaking order; a
    referee's own persona is restated at each of its turns, the conversation layout's rules
    name the panel. ``style`` is the prompt style (module docstring).
    """

    def __init__(
        self,
        verdict_format: VerdictFormat,
        layout: PromptLayout = "paper",
        roster: Sequence[tuple[str, str]] = (),
        style: PromptStyle = "paper",
    ) -> None:
        self.dimensions = list(verdict_format.dimensions) if isinstance(verdict_format, DirectFormat) else []
        self.form = verdict_format.form
        self.scale = (
            (0, 0) if isinstance(verdict_format, DirectFormat) else (verdict_format.low, verdict_format.high)
        )
        self.nudged = style == "nudged"
        nudge = f"\n{_EQUAL_SCORES_RULE}" if self.nudged and not self.dimensions else ""
        self.verdict_instruction = verdict_format.instruction + nudge
        self.layout = layout
        # One line per persona, whatever line breaks a custom description has.
        self.roster = {name: " ".join(persona.split()) for name, persona in roster}
        if layout in ("paper", "conversation", "compact") and not self.roster:
            raise ValueError(f"the {layout} layout needs the panel's roster")
        # A panel of one (the single-agent baseline) hears nothing of other referees.
        self.panel = len(self.roster) > 1
        self.system = _render("system.j2").strip()
        # The conversation layouts' rules are the same for every item and turn: rendered once.
        if layout == "compact":
            self.rules = _render(
                "compact_rules.j2",
                roster=list(self.roster.items()),
                verdict_instruction=self.verdict_instruction,
            ).strip()
        else:
            self.rules = _render("panel_rules.j2", names=", ".join(self.roster)).strip()

    def instruction_texts(self) -> list[str]:
        """Every instruction chateval writes into this panel's prompts (not the task's data):
        what a referee echoing its prompt would repeat."""
        texts = [_render("summarizer.j2", summary="", lines=[]).strip()]
        if self.layout != "paper":
            texts += [self.system, self.rules]
        texts += [self._turn(name, final) for name in self.roster for final in (False, True)]
        # The task's framing, without an item's text.
        texts += [self.task_block(PairwiseItem("", "", "", "")), self.task_block(DirectItem("", "", ""))]
        return texts

    def task_block(self, item: Item, swapped: bool = False) -> str:
        """The part every speaker of this item shares. ``swapped`` shows answer B first."""
        paper = self.layout == "paper"
        if isinstance(item, PairwiseItem):
            first, second = (item.answer_b, item.answer_a) if swapped else (item.answer_a, item.answer_b)
            template = "paper_pairwise.j2" if paper else "pairwise.j2"
            low, high = self.scale
            earlier = _earlier_block(item, swapped)
            return _render(
                template,
                item=item,
                answer_1=first,
                answer_2=second,
                panel=self.panel,
                low=low,
                high=high,
                earlier=earlier,
            )
        assert isinstance(item, DirectItem)
        template = "paper_direct.j2" if paper else "direct.j2"
        return _render(template, item=item, dimensions=self.dimensions, panel=self.panel)

    def agent_messages(
        self,
        item: Item,
        agent_name: str,
        visible: Sequence[Utterance],
        final: bool,
        swapped: bool = False,
        assessment: str | None = None,
        seen_at: SeenAt | None = None,
    ) -> tuple[ChatMessage, ...]:
        """Messages for a referee's turn, in this builder's layout.

        ``seen_at(turn)``: what the speaker saw at an earlier turn of its own (the conversation
        layouts quote the others' words after the speaker's own turns that did not see them);
        without it, everything said before one of its turns counts as seen then.

        Outside the paper layout the last message is the lead the referee's answer continues:
        its name. For the scores of a reasoned verdict (``assessment`` set) the lead is its own
        assessment and ``Scores:`` (after its name, outside the paper layout).
        """
        if agent_name not in self.roster:
            raise ValueError(f"{agent_name!r} is not on the panel roster")
        ask = self._turn(agent_name, final)
        if self.layout in ("conversation", "compact"):
            messages = self._conversation(item, swapped, visible, ask, agent_name, seen_at)
        elif self.layout == "paper":
            messages = (ChatMessage("user", self._paper_body(item, swapped, visible, ask)),)
        else:
            shared = self.task_block(item, swapped) + "\n" + self._discussion(visible)
            body = ask + "\n\n" + shared if self.layout == "role_first" else shared + "\n" + ask
            messages = (ChatMessage("system", self.system), ChatMessage("user", body.strip()))
        lead = self._lead(agent_name, assessment)
        return messages + ((ChatMessage("assistant", lead),) if lead is not None else ())

    def _lead(self, speaker: str, assessment: str | None) -> str | None:
        """What the speaker's answer continues: its name (and its assessment before its scores).
        The paper and compact layouts name no speaker, so only their scores continue something."""
        if self.layout in ("paper", "compact"):
            return None if assessment is None else scoring_lead(assessment)
        return f"{speaker}:" if assessment is None else f"{speaker}: {scoring_lead(assessment)}"

    def summarizer_messages(self, visible: Sequence[Utterance]) -> tuple[ChatMessage, ...]:
        """The summarizer's one message, the same in every layout: the referee's current summary
        (its latest in ``visible``) and every line ``visible`` holds, earlier summaries included;
        no task text."""
        lines = spoken(visible)
        current = next((said.text for said in reversed(lines) if said.kind == "summary"), "")
        return (ChatMessage("user", _render("summarizer.j2", summary=current, lines=lines).strip()),)

    def _discussion(self, visible: Sequence[Utterance]) -> str:
        """The visible discussion under a heading, a line per utterance: "[Name]: ..." in the paper
        layout (the 2023 code's form), "Name: ..." in the others; empty when nothing was said."""
        template = "paper_discussion.j2" if self.layout == "paper" else "discussion.j2"
        return _render(template, discussion=spoken(visible))

    def _paper_body(self, item: Item, swapped: bool, visible: Sequence[Utterance], ask: str) -> str:
        """The paper layout's one user message: task and instruction, discussion, the speaker's part."""
        parts = (self.task_block(item, swapped), self._discussion(visible), ask)
        return "\n\n".join(part.strip() for part in parts if part.strip())

    def _turn(self, speaker: str, final: bool) -> str:
        """A referee's turn: who it is (its persona) and what it is asked."""
        if self.layout == "compact":
            return _render("compact_ask.j2", agent_name=speaker, final=final).strip()
        if self.layout == "paper":
            lines = _render(
                "paper_turn.j2",
                agent_name=speaker,
                role_description=self.roster[speaker],
                final=final,
                panel=self.panel,
                pairwise=not self.dimensions,
                nudged=self.nudged,
                form=self.form,
            ).splitlines()
            return "\n".join(line.strip() for line in lines if line.strip())
        return _render(
            "turn.j2",
            agent_name=speaker,
            role_description=self.roster[speaker],
            final=final,
            verdict_instruction=self.verdict_instruction,
        ).strip()

    def _conversation(
        self,
        item: Item,
        swapped: bool,
        visible: Sequence[Utterance],
        ask: str,
        listener: str,
        seen_at: SeenAt | None = None,
    ) -> tuple[ChatMessage, ...]:
        """The debate as ``listener``'s own chat: rules and task, then (request, its own
        utterance) pairs, then ``ask``.

        Only the listener's own utterances are assistant messages, each after the request it
        answered; what the other referees said (and any summary) is quoted under their names
        in the next user message. So a referee's turn begins with the whole text, prompt plus
        answer, of its own previous turn.
        """
        # The panel's rules come before the task: the same for every item, so they stay cached.
        pending = self.rules + "\n\n" + self.task_block(item, swapped).strip() + "\n\n"
        quoted: list[Said] = []  # the others' words since the listener last spoke
        messages = [ChatMessage("system", self.system)]

        def flush(before: Turn | None = None) -> str:
            """The quoted words (those the listener saw at its turn ``before``) as text: runs of
            talk under one heading, summaries as such."""
            seen = None if before is None or seen_at is None else {u.turn for u in seen_at(before)}
            shown = [q for q in quoted if seen is None or q.turn in seen]
            quoted[:] = [q for q in quoted if q not in shown]
            text = ""
            for is_summary, run in groupby(shown, key=lambda q: q.kind == "summary"):
                said = list(run)
                blocks = (
                    [_render("summary.j2", summary=q.text) for q in said]
                    if is_summary
                    else [_render("discussion.j2", discussion=said)]
                )
                text += "".join(block.strip() + "\n\n" for block in blocks)
            return text

        for said in spoken(visible):
            if said.speaker != listener:
                quoted.append(said)
                continue
            pending += flush(said.turn) + self._turn(said.speaker, said.kind == "verdict")
            answer = said.text if self.layout == "compact" else f"{said.speaker}: {said.text}"
            messages += [ChatMessage("user", pending.strip()), ChatMessage("assistant", answer)]
            pending = ""
        messages.append(ChatMessage("user", (pending + flush() + ask).strip()))
        return tuple(messages)
