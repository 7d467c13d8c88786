"""The systems a design meets: N log-strengths evenly spaced over a spread, listed in a
shuffled order (so the design's system order says nothing about strength), some of them
made equal for the stops table.
"""

import random

SPREAD = 2.0  # log-strength between the best and the worst system: odds of e^2 = 7.4 to 1


def planted(n: int, rng: random.Random, spread: float = SPREAD) -> dict[str, float]:
    """N systems named s01.. with evenly spaced log-strengths, in a shuffled listing order."""
    values = [spread * (i / (n - 1) - 0.5) for i in range(n)]
    rng.shuffle(values)
    return {f"s{i + 1:02d}": v for i, v in enumerate(values)}


def planted_ties(n: int, tied: str, rng: random.Random, spread: float = SPREAD) -> dict[str, float]:
    """``planted`` with two systems made equal: the best two (``tied`` "best") or the middle
    two ("middle") take the mean of their two strengths; "all": every system equal."""
    values = sorted((spread * (i / (n - 1) - 0.5) for i in range(n)), reverse=True)
    if tied == "all":
        values = [0.0] * n
    else:
        first = 0 if tied == "best" else n // 2 - 1
        values[first] = values[first + 1] = (values[first] + values[first + 1]) / 2
    rng.shuffle(values)
    return {f"s{i + 1:02d}": v for i, v in enumerate(values)}
