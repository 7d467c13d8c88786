"""A referee panel: who speaks (agents, summarizer), how turns become requests and utterances.

The panel is the glue between a strategy (who sees what) and the backends (requests): it turns
a (debate, turn) pair into a GenerationRequest and a GenerationResult back into an Utterance.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.core.console_handler import once
from chateval.core.distributions import ScoreDistribution
from chateval.core.transcript import SUMMARIZER, Debate, Transcript, Turn, Utterance, UtteranceKind
from chateval.debate.strategies import Step, Strategy
from chateval.errors import VerdictError
from chateval.judging.formats import DirectVerdict, PairwiseVerdict, VerdictFormat
from chateval.judging.soft import read_score, score_pieces
from chateval.prompts.builder import PromptBuilder, Role

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Agent:
    """A referee of the panel."""

    name: str
    role: Role
    model: str


@dataclass(frozen=True)
class Sampling:
    """Decoding settings the panel puts on its requests."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    discussion_max_tokens: int = 96
    summary_max_tokens: int = 128


@dataclass(frozen=True)
class Panel:
    """Agents, rounds and a strategy, plus everything needed to build their requests."""

    agents: tuple[Agent, ...]
    rounds: int
    strategy: Strategy
    prompts: PromptBuilder
    verdict_format: VerdictFormat
    sampling: Sampling
    summarizer_model: str
    # Ask every referee for a hidden verdict before the discussion and after each non-final
    # round (one extra step at the end, batched over all items): how often minds change.
    opinion_probes: bool = False
    # After each non-final round, ask every referee for its verdict (a check step); a debate
    # whose referees all agree stops there, the check answers becoming its verdicts.
    early_stop: bool = False
    # Ask for the probabilities of the score values with every constrained score (soft verdicts).
    soft: bool = False
    # The scores of a reasoned verdict get what its assessment left of the assessment's budget
    # (the paper's one reply), instead of a budget of their own.
    shared_budget: bool = False
    # Pairwise: an item with a failed verdict counts as a tie (the 2023 rule), instead of
    # leaving that referee out.
    failure_ties: bool = False

    def plan(self) -> list[Step]:
        """The strategy's steps (a referee's last-round turns made verdicts), plus early-stop
        check steps and the final probe step; with reasoning, every step of verdict-giving
        turns is followed by a step of their scores."""
        n = len(self.agents)
        last = self.rounds - 1
        steps = [
            tuple(
                replace(t, kind="verdict") if t.kind == "discussion" and t.round == last else t for t in step
            )
            for step in self.strategy.plan(n, self.rounds)
        ]
        if self.early_stop:
            with_checks: list[Step] = []
            for index, step in enumerate(steps):
                with_checks.append(step)
                r = step[0].round
                round_ends = index + 1 == len(steps) or steps[index + 1][0].round != r
                if round_ends and r < self.rounds - 1:
                    with_checks.append(tuple(Turn(r + 1, a, "check") for a in range(n)))
            steps = with_checks
        if self.opinion_probes:
            steps.append(tuple(Turn(r, a, "probe") for r in range(self.rounds) for a in range(n)))
        if not self.reasoning:
            return steps
        with_scores: list[Step] = []
        for step in steps:
            with_scores.append(step)
            scored = tuple(t.scored() for t in step if t.gives_verdict)
            if scored:
                with_scores.append(scored)
        return with_scores

    @property
    def reasoning(self) -> bool:
        """Verdict turns write an assessment before their constrained scores."""
        return self.verdict_format.reasoning

    def finished(self, debate: Debate) -> bool:
        """Every referee has given its verdict (at the end, or at an early-stop check)."""
        return sum(1 for u in debate.transcript.utterances if u.kind == "verdict") >= len(self.agents)

    def needs(self, debate: Debate, turn: Turn) -> bool:
        """Whether ``turn`` still has to run for ``debate``.

        A finished debate only takes probes for rounds it actually reached; a probe that an
        early-stop check already asked is not asked again.
        """
        said = debate.transcript.utterances
        if turn.hidden:
            reached = max((u.turn.round for u in said if not u.turn.hidden), default=-1) + 1
            asked = any(u.turn.question() == turn.question() and u.turn.scoring == turn.scoring for u in said)
            return turn.round <= reached and not asked
        return not self.finished(debate)

    def due(self, debate: Debate, step: Step) -> list[Turn]:
        """The turns of ``step`` that still have to run for ``debate``."""
        return [turn for turn in step if self.needs(debate, turn)]

    def advance(
        self, debate: Debate, step: Step, turns: Sequence[Turn], results: Sequence[GenerationResult]
    ) -> list[Utterance]:
        """Complete ``step`` of ``debate`` with the results of its due ``turns``.

        The one step walk every path shares (step barriers, streaming, the sequential bench
        loop, context fitting): results become utterances, a unanimous early-stop check
        becomes the debate's verdicts, and the utterances join the transcript. Returns them.
        """
        made = [self.utterance(turn, result) for turn, result in zip(turns, results, strict=True)]
        settled = self._settle(step, made)
        for utterance in settled:
            debate.transcript = debate.transcript.add(utterance)
        return settled

    def warn_if_unusable(self, debate: Debate, utterance: Utterance) -> None:
        """Warn (on the console: the first of each kind, counted after) of a verdict that did
        not parse and of an assessment cut off at its token cap (its scores rest on unfinished
        reasoning). The scheduler calls it on what the models said, not context fitting on its
        stand-in answers."""
        where = f"{debate.key}: {utterance.speaker}"
        if utterance.kind == "verdict":
            try:
                self.verdict_format.parse(utterance.text)
            except VerdictError as exc:
                log.warning(
                    "%s's verdict did not parse (%s)",
                    where,
                    exc,
                    extra=once(
                        "parse_failure", "verdicts that did not parse (run.json: verdict_parse_failures)"
                    ),
                )
        elif (
            utterance.kind == "assessment"
            and utterance.finish_reason == "length"
            and not utterance.turn.hidden
        ):
            log.warning(
                "%s's assessment stopped at its token cap (%s tokens): its scores rest on unfinished "
                "reasoning",
                where,
                utterance.tokens,
                extra=once("cut_off_assessment", "assessments cut off at their token cap"),
            )

    def _settle(self, step: Step, utterances: list[Utterance]) -> list[Utterance]:
        """One debate's utterances of ``step``; a unanimous early-stop check (every referee's
        scores, or verdict without reasoning) becomes its verdicts."""
        is_check = all(t.kind == "check" and t.scoring == self.reasoning for t in step)
        if not is_check or len(utterances) != len(self.agents):
            return utterances
        if not self._unanimous([u.text for u in utterances]):
            return utterances
        return [replace(u, kind="verdict") for u in utterances]

    def _unanimous(self, texts: list[str]) -> bool:
        opinions: list[object] = []
        for text in texts:
            try:
                verdict = self.verdict_format.parse(text)
            except VerdictError:
                return False
            if isinstance(verdict, PairwiseVerdict):
                opinions.append(verdict.winner_shown)
            elif isinstance(verdict, DirectVerdict):
                opinions.append(tuple(sorted(verdict.scores.items())))
        return len(set(opinions)) == 1

    def constrained(self, turn: Turn) -> bool:
        """The turn writes score lines under the verdict format's constraint."""
        return turn.gives_verdict and (turn.scoring or not self.reasoning)

    def visible(self, debate: Debate, turn: Turn) -> list[Utterance]:
        """What the speaker of ``turn`` sees. Probe and check answers are hidden from everyone;
        a probe sees what its speaker saw when entering its round. A scoring turn sees what its
        assessment saw (its own assessment is the lead it continues)."""
        turn = turn.reasoned()
        said = tuple(u for u in debate.transcript.utterances if not u.turn.hidden)
        if not turn.hidden:
            return self.strategy.visible(Transcript(said), turn)
        earlier = Transcript(tuple(u for u in said if u.turn.round < turn.round))
        return self.strategy.visible(earlier, Turn(turn.round, turn.agent))

    def _assessment_of(self, debate: Debate, turn: Turn) -> Utterance:
        """The assessment a scoring turn continues: its own verdict turn's first half."""
        return next(
            u
            for u in debate.transcript.utterances
            if u.kind == "assessment" and u.turn.question() == turn.question()
        )

    def assessment(self, debate: Debate, turn: Turn) -> str:
        """The text of the assessment a scoring turn continues."""
        return self._assessment_of(debate, turn).text

    def request(self, debate: Debate, turn: Turn) -> GenerationRequest:
        """The request for ``turn`` of ``debate``, built from what the strategy lets it see."""
        visible = self.visible(debate, turn)
        s = self.sampling
        if turn.is_summary:
            return GenerationRequest(
                model=self.summarizer_model,
                messages=self.prompts.summarizer_messages(visible),
                max_tokens=s.summary_max_tokens,
                temperature=s.temperature,
                top_p=s.top_p,
                seed=s.seed,
            )
        assert turn.agent is not None  # only an old run's summaries have none
        agent = self.agents[turn.agent]
        final = turn.gives_verdict
        constrained = self.constrained(turn)
        if constrained:
            max_tokens = self.verdict_format.max_tokens
            if self.shared_budget and turn.scoring:
                # Not below 1 (engines refuse 0): a single token cannot finish the scores either.
                used = self._assessment_of(debate, turn).tokens or 0  # None: not recorded
                left = self.verdict_format.assessment_max_tokens - used
                max_tokens = max(1, min(max_tokens, left))
        elif final:
            max_tokens = self.verdict_format.assessment_max_tokens
        else:
            max_tokens = s.discussion_max_tokens
        return GenerationRequest(
            model=agent.model,
            messages=self.prompts.agent_messages(
                debate.item,
                agent.name,
                visible,
                final,
                debate.swapped,
                self.assessment(debate, turn) if turn.scoring else None,
                lambda earlier: self.visible(debate, earlier),
            ),
            max_tokens=max_tokens,
            temperature=s.temperature,
            top_p=s.top_p,
            seed=s.seed,
            regex=self._constraint(turn),
            probabilities_of=score_pieces(self.verdict_format.scales) if constrained and self.soft else (),
        )

    def _constraint(self, turn: Turn) -> str | None:
        """The regular expression a turn's answer is held to: the score lines, or for an
        assessment the rule that an explanation comes before any score."""
        if self.constrained(turn):
            return self.verdict_format.regex
        return self.verdict_format.assessment_regex if turn.gives_verdict else None

    def utterance(self, turn: Turn, result: GenerationResult) -> Utterance:
        """Wrap a backend result as the utterance of ``turn``."""
        if turn.is_summary:
            return Utterance(
                turn,
                SUMMARIZER.capitalize(),
                "summary",
                result.text.strip(),
                result.finish_reason,
                tokens=result.generated_tokens,
            )
        assert turn.agent is not None
        kind: UtteranceKind = "discussion"
        name = self.agents[turn.agent].name
        text = result.text.strip()
        distributions = None
        if self.constrained(turn):
            kind = "probe" if turn.hidden else "verdict"
            distributions = self._distributions(result)
        else:
            # A reply that opens with its speaker's name (as the discussion lines it was shown
            # do) would read "Critic: Critic: ..." to the others.
            text = text.removeprefix(f"{name}:").strip()
            if turn.gives_verdict:
                kind = "assessment"
                text = self.verdict_format.assessment(text)  # the scores are the next request's
        return Utterance(
            turn,
            name,
            kind,
            text,
            result.finish_reason,
            distributions,
            result.generated_tokens,
        )

    def _distributions(self, result: GenerationResult) -> tuple[ScoreDistribution, ...] | None:
        """Each score's distribution, when the backend reported token probabilities."""
        if not self.soft or result.token_probabilities is None:
            return None
        spans = self.verdict_format.score_spans(result.text)
        if spans is None:
            return None  # the verdict does not parse: it counts as a failure, hard and soft
        return tuple(
            read_score(result.text, span, result.token_ends, result.token_probabilities, values)
            for span, values in zip(spans, self.verdict_format.scales, strict=True)
        )
