"""The adaptive design as a run uses it (``evaluation.systems.adaptive_design``), choosing from
all pairs of POOL prompts, its waves decided by a panel drawn from the planted Davidson model.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chateval.evaluation.systems.adaptive_design import (
    RESOLVED,
    TOP_K_RESOLVED,
    AdaptiveDesign,
    AdaptiveSettings,
    Candidate,
    simulate,
)
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from simulations.davidson import NU

POOL = 80  # prompts the adaptive design may choose from (FairEval has 80 questions)
ADAPTIVE = "adaptive"


@dataclass(frozen=True)
class Adaptive:
    """The adaptive design, resolving the whole order (``top_k`` None) or the best k."""

    top_k: int | None = None


@dataclass(frozen=True)
class AdaptiveOutcome:
    """One simulated adaptive run: its decided comparisons wave by wave, and the order its
    "resolved" stop claimed (None: it did not stop resolved)."""

    waves: list[list[Comparison]]
    claimed: list[str] | None

    @property
    def comparisons(self) -> list[Comparison]:
        """Every decided comparison, in the order decided."""
        return [c for wave in self.waves for c in wave]


def adaptive_comparisons(
    strengths: dict[str, float], design: Adaptive, budget: int, seed: int
) -> AdaptiveOutcome:
    """The adaptive design's comparisons, chosen from all pairs on POOL prompts."""
    systems = list(strengths)
    candidates = [
        Candidate(f"p{p}:{a}:{b}", f"p{p}", a, b)
        for p in range(POOL)
        for a, b in itertools.combinations(systems, 2)
    ]
    settings = AdaptiveSettings(budget, max(2 * len(systems), 16), design.top_k, seed)
    rng = np.random.default_rng(seed)

    def judge(wave: Sequence[Candidate]) -> list[Comparison | None]:
        return list(simulate_davidson(strengths, NU, [(c.prompt, c.system_a, c.system_b) for c in wave], rng))

    adaptive = AdaptiveDesign(candidates, systems, settings)
    decided = iter(simulate(adaptive, judge))  # in wave order
    waves = [[c for c in itertools.islice(decided, len(wave)) if c is not None] for wave in adaptive.waves]
    claimed = adaptive.stop_order if adaptive.stop in (RESOLVED, TOP_K_RESOLVED) else None
    return AdaptiveOutcome(waves, claimed)
