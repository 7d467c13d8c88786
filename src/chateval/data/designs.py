"""Comparison designs: which systems meet on each prompt of responses data.

- ``all_pairs``: every unordered pair, N(N-1)/2 comparisons per prompt;
- ``against`` a baseline: each other system (as A) against the baseline (as B), N-1 per prompt;
- ``opponents`` K: each system meets exactly K others, N*K/2 per prompt. Per prompt, a seeded
  random permutation of the systems is laid on a circle and each system meets its neighbours
  at offsets 1..K/2 (and, K odd, the one opposite it, which needs N even): a K-regular
  circulant graph. Every pair is equally likely over prompts, so coverage balances out;
- ``adaptive``: the all_pairs comparisons are its candidates, of which a run debates the ones
  the adaptive design chooses (run/adaptive.py).

In all_pairs and opponents, A is the system named first in the systems' order; each
comparison is debated in both answer orders anyway (``position_calibration``).
"""

import random
from collections.abc import Sequence

from chateval.config.designs import CompareDesign
from chateval.errors import ConfigError

Pair = tuple[str, str]
"""(system A, system B) of one comparison."""


def check_design(design: CompareDesign, systems: Sequence[str], source: str) -> None:
    """Refuse a design the systems cannot satisfy; ConfigError names the key and the systems."""
    names = ", ".join(systems)
    if design.against is not None and design.against not in systems:
        raise ConfigError(
            f"{source}: data.compare.against: {design.against!r} is not one of the systems ({names})"
        )
    adaptive = design.adaptive
    if adaptive is not None and adaptive.top_k is not None and adaptive.top_k >= len(systems):
        raise ConfigError(
            f"{source}: data.compare.adaptive.top_k: {adaptive.top_k} but there are {len(systems)} "
            f"systems ({names}); the best K must leave some systems out"
        )
    k, n = design.opponents, len(systems)
    if k is None:
        return
    if k >= n:
        raise ConfigError(
            f"{source}: data.compare.opponents: K={k} but there are {n} systems ({names}); "
            f"each can meet at most {n - 1} others (all_pairs)"
        )
    if k % 2 == 1 and n % 2 == 1:
        raise ConfigError(
            f"{source}: data.compare.opponents: K={k} is odd and so is the number of systems ({n}): "
            "no design gives every system exactly K opponents; use an even K"
        )


def all_pairs(systems: Sequence[str]) -> list[Pair]:
    """Every unordered pair, the earlier system as A."""
    return [(a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]]


def against(systems: Sequence[str], baseline: str) -> list[Pair]:
    """Each other system as A against ``baseline`` as B."""
    return [(s, baseline) for s in systems if s != baseline]


def opponents(systems: Sequence[str], k: int, rng: random.Random) -> list[Pair]:
    """A K-regular circulant design on a random permutation of ``systems`` (see the module)."""
    n = len(systems)
    circle = list(systems)
    rng.shuffle(circle)
    offsets = list(range(1, k // 2 + 1))
    edges = [(circle[i], circle[(i + d) % n]) for d in offsets for i in range(n)]
    if k % 2 == 1:
        edges += [(circle[i], circle[i + n // 2]) for i in range(n // 2)]
    rank = {s: i for i, s in enumerate(systems)}
    pairs = [(a, b) if rank[a] < rank[b] else (b, a) for a, b in edges]
    return sorted(pairs, key=lambda p: (rank[p[0]], rank[p[1]]))


def design_pairs(design: CompareDesign, systems: Sequence[str], seed: int, prompt: str) -> list[Pair]:
    """The comparisons of one prompt; opponents draws from (seed, prompt) alone, so a prompt's
    design does not depend on the other prompts (nor on ``limit``)."""
    if design.against is not None:
        return against(systems, design.against)
    if design.opponents is not None:
        return opponents(systems, design.opponents, random.Random(f"chateval-design:{seed}:{prompt}"))
    return all_pairs(systems)


def comparisons_per_prompt(design: CompareDesign, n: int) -> int:
    """How many comparisons a design builds per prompt of ``n`` systems."""
    if design.against is not None:
        return n - 1
    if design.opponents is not None:
        return n * design.opponents // 2
    return n * (n - 1) // 2
