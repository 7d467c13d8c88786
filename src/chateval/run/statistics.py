"""The statistics settings of a run, from its config and the referee -> model map."""

from collections.abc import Mapping

from chateval.config.run import RunConfig
from chateval.debate.building import build_panel
from chateval.debate.panel import Panel
from chateval.evaluation.diagnostics.verdict_collapse import pairwise_scales
from chateval.evaluation.settings import RESOLVED_ALPHA, StatisticsSettings
from chateval.evaluation.systems.adaptive_design import LOOK_ALPHA


def panel_models(panel: Panel) -> tuple[dict[str, str], str]:
    """Each referee's model by its name on the panel, and the summarizer's model (what run.json
    keeps; for runs of earlier releases ``statistics_settings`` rebuilds it from the config)."""
    return {agent.name: agent.model for agent in panel.agents}, panel.summarizer_model


def statistics_settings(
    config: RunConfig, referees: Mapping[str, str] | None = None, summarizer: str | None = None
) -> StatisticsSettings:
    """What the statistics need of ``config``; ``referees`` (name -> model) and ``summarizer``
    as run.json keeps them, else from the config's panel."""
    if referees is None:
        referees, summarizer = panel_models(build_panel(config))
    verdict = config.verdict
    if config.task == "pairwise":
        scales = pairwise_scales(verdict.low, verdict.high)
    else:
        scales = {d.name: (d.low, d.high) for d in config.dimensions}
    return StatisticsSettings(
        task=config.task,
        scales=scales,
        aggregation=verdict.aggregation,
        soft=verdict.soft,
        seed=config.sampling.seed,
        baseline=config.data.design().against,
        referee_models=dict(referees),
        summarizer_model=summarizer,
        # An adaptive run's final board is one of the looks its design's 5% is split over.
        resolved_alpha=LOOK_ALPHA if config.data.design().adaptive is not None else RESOLVED_ALPHA,
    )
