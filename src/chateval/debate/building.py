"""From a validated config to what a run debates: the panel, its items and their debates."""

from collections.abc import Mapping, Sequence

from chateval.config.run import RunConfig
from chateval.core.backend import HFTokenCounting
from chateval.core.items import DirectItem, Item, PairwiseItem
from chateval.core.transcript import SUMMARIZER, Debate
from chateval.data import load_items
from chateval.debate.panel import Agent, Panel, Sampling
from chateval.debate.strategies import get_strategy
from chateval.errors import ConfigError, DataError
from chateval.judging.formats import Dimension, DirectFormat, PairwiseFormat, VerdictFormat
from chateval.judging.soft import check_vocabulary
from chateval.prompts.builder import PromptBuilder, Role, get_role


def verdict_format(config: RunConfig) -> VerdictFormat:
    """The verdict format the config asks for."""
    v = config.verdict
    if config.task == "pairwise":
        return PairwiseFormat(
            v.low, v.high, v.evidence_max_tokens, v.reasoning, v.reasoning_max_tokens, v.half_points
        )
    dims = [Dimension(d.name, d.description, d.low, d.high) for d in config.dimensions]
    return DirectFormat(dims, v.evidence_max_tokens, v.reasoning, v.reasoning_max_tokens, v.half_points)


def check_debatable(config: RunConfig) -> None:
    """Refuse, before a new debate starts, a lone referee over several rounds: it has no one to
    discuss with, so its later rounds would quote its own words as "the discussion so far".
    (A finished run's config is read as written: this is not a config validator.)"""
    if len(config.agents) == 1 and config.rounds > 1:
        raise ConfigError(
            f"rounds: {config.rounds} with one agent: a lone referee has no one to discuss with (its "
            "later rounds would quote its own words as the discussion); set rounds: 1 for the "
            "single-agent baseline, or add referees for a debate"
        )


def build_panel(config: RunConfig) -> Panel:
    """Resolve roles and agent names and assemble the panel of ``config``."""
    agents = []
    for agent in config.agents:
        role = (
            get_role(agent.role, config.task)
            if isinstance(agent.role, str)
            else Role(agent.role.name, agent.role.description)
        )
        agents.append(Agent(name=agent.name or role.name, role=role, model=agent.model))
    # Repeated roles (the paper's same-role ablation) need distinct speaker names.
    names = [a.name for a in agents]
    agents = [
        Agent(f"{a.name} {names[:i].count(a.name) + 1}", a.role, a.model) if names.count(a.name) > 1 else a
        for i, a in enumerate(agents)
    ]
    # Prompts and transcripts tell speakers apart by name only.
    final_names = [a.name for a in agents]
    clashes = sorted({n for n in final_names if final_names.count(n) > 1 or n.lower() == SUMMARIZER})
    if clashes:
        raise ConfigError(f"agents: speaker names must be distinct and not 'Summarizer'; clash: {clashes}")
    fmt = verdict_format(config)
    s = config.sampling
    return Panel(
        agents=tuple(agents),
        rounds=config.rounds,
        strategy=get_strategy(config.strategy),
        prompts=PromptBuilder(
            fmt, config.prompt_layout, [(a.name, a.role.description) for a in agents], config.prompt_style
        ),
        verdict_format=fmt,
        sampling=Sampling(s.temperature, s.top_p, s.seed, s.discussion_max_tokens, s.summary_max_tokens),
        summarizer_model=config.summarizer_model,
        opinion_probes=config.opinion_probes,
        early_stop=config.early_stop,
        soft=config.verdict.soft,
        shared_budget=config.verdict.shared_budget,
        failure_ties=config.verdict.on_failure == "tie",
    )


def check_soft_verdicts(panel: Panel, counters: Mapping[str, object]) -> None:
    """Refuse, before anything runs, a referee model whose score probabilities cannot be read.

    Backends without a vocabulary (scripted ones) are skipped: their results say themselves
    whether they carry probabilities.
    """
    referee_models = dict.fromkeys(a.model for a in panel.agents)
    for model in referee_models:
        counter = counters.get(model)
        if isinstance(counter, HFTokenCounting):
            check_vocabulary(model, counter.digit_tokens().values(), panel.verdict_format.scales)


def load_run_items(config: RunConfig) -> list[Item]:
    """Load the config's items (``data.limit`` applied) and check they fit its task."""
    items = load_items(config.data, config.task)
    expected = PairwiseItem if config.task == "pairwise" else DirectItem
    if items and not isinstance(items[0], expected):
        raise DataError(
            f"{config.data.source}: format {config.data.format!r} gives "
            f"{type(items[0]).__name__} records, but the task is {config.task!r}"
        )
    return items


def build_debates(items: Sequence[Item], position_calibration: bool = False) -> list[Debate]:
    """One debate per item; pairwise items also in swapped order when calibrating."""
    debates = []
    for item in items:
        debates.append(Debate(key=item.id, item=item))
        if position_calibration and isinstance(item, PairwiseItem):
            debates.append(Debate(key=f"{item.id}#swapped", item=item, swapped=True))
    return debates
