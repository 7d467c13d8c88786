"""What the statistics of a run need to know about it, and nothing more.

The evaluation package reads verdict records and these settings; it never sees the run config
or the debate code. ``chateval.run.statistics`` builds the settings from a config (and the
referee -> model map that run.json keeps).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Scales = Mapping[str, tuple[int, int]]  # each score's (low, high), by score name
# The joint error of a leaderboard's ``resolved`` pairs: one look, all pairs. An adaptive run
# splits it between its stop's looks and its final board (systems.adaptive_design's module doc).
RESOLVED_ALPHA = 0.05


@dataclass(frozen=True)
class StatisticsSettings:
    """A run's task, scales, aggregation, seed, design and who judged with which model."""

    task: Literal["pairwise", "direct"]
    # Each score's scale: pairwise the verdict's "A" and "B", direct each dimension's (in order).
    scales: Scales
    # The aggregation metrics.json reports first: "hard" (the parsed scores) or "soft" (their
    # probabilities' expectations, when read).
    aggregation: Literal["hard", "soft"] = "hard"
    soft: bool = True  # whether the referees were asked for score probabilities at all
    seed: int = 0  # of every bootstrap and simulation
    # The baseline system the design compares every other against (the leaderboard's anchor).
    baseline: str | None = None
    referee_models: Mapping[str, str] = field(default_factory=dict)  # referee name -> its model
    summarizer_model: str | None = None  # the model whose summaries' cut-offs count for it
    # The joint error of the leaderboards' resolved pairs: 0.05, or, for a run with the
    # adaptive design, the final board's share of the design's 0.05 (adaptive_design.LOOK_ALPHA).
    resolved_alpha: float = RESOLVED_ALPHA

    @property
    def dimensions(self) -> list[str]:
        """The scored dimensions of a direct run, in order (pairwise: none)."""
        return [] if self.task == "pairwise" else list(self.scales)
