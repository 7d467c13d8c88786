"""The planted Davidson model both simulations draw from (the leaderboard's own model, ties
with nu = NU): what a pair's win rate truly is, and every pair of systems compared on each
prompt.
"""

import itertools
import math

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_simulation import simulate_davidson

NU = 0.5


def planted_win_rate(strengths: dict[str, float], a: str, b: str) -> float:
    """P(a wins) + P(tie) / 2 under the Davidson model with log-strengths ``strengths``."""
    pa, pb = math.exp(strengths[a]), math.exp(strengths[b])
    tie = NU * math.sqrt(pa * pb)
    return (pa + tie / 2) / (pa + pb + tie)


def averaged_win_rates(planted: dict[str, float], draws: np.ndarray) -> dict[tuple[str, str], float]:
    """Each pair's planted win rate (ties half) averaged over ``draws`` of the two systems'
    prompt effects (rows of two log-strength shifts)."""
    rates = {}
    for a, b in itertools.combinations(planted, 2):
        pa, pb = np.exp(planted[a] + draws[:, 0]), np.exp(planted[b] + draws[:, 1])
        tie = NU * np.sqrt(pa * pb)
        rates[(a, b)] = float(np.mean((pa + tie / 2) / (pa + pb + tie)))
    return rates


def all_pairs_comparisons(
    planted: dict[str, float], prompts: int, spread: float, repeats: int, rng: np.random.Generator
) -> list[Comparison]:
    """Every pair of ``planted``'s systems ``repeats`` times on each of ``prompts`` prompts,
    answer order drawn at random; each system's log-strength on a prompt (its answer, which the
    prompt's comparisons share) is its own plus N(0, spread^2)."""
    comparisons: list[Comparison] = []
    for p in range(prompts):
        noise = rng.normal(0.0, spread, len(planted)) if spread else np.zeros(len(planted))
        strengths = {s: v + float(u) for (s, v), u in zip(planted.items(), noise, strict=True)}
        pairs = [
            (f"p{p}", a, b) if rng.random() < 0.5 else (f"p{p}", b, a)
            for a, b in itertools.combinations(planted, 2)
            for _ in range(repeats)
        ]
        comparisons += simulate_davidson(strengths, NU, pairs, rng)
    return comparisons
