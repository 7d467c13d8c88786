"""Synthetic panel decisions drawn from the Davidson model (``davidson_model``) with planted
strengths, tie parameter and length coefficient: the input of the planted-ranking checks (the
leaderboard's tests, ``scripts/simulate_designs.py``)."""

from collections.abc import Mapping, Sequence

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_model import A_WON, TIE, length_difference


def simulate_davidson(
    strengths: Mapping[str, float],
    nu: float,
    pairs: Sequence[tuple[str, str, str]],
    rng: np.random.Generator,
    gamma: float = 0.0,
    lengths: Mapping[tuple[str, str], int] | None = None,
) -> list[Comparison]:
    """Draw one panel decision per (prompt, system_a, system_b) of ``pairs`` from the Davidson
    model with log-strengths ``strengths`` and tie parameter ``nu`` (0: no ties), and with the
    length covariate's coefficient ``gamma`` when ``lengths`` gives each (prompt, system)'s
    answer length (missing: lengths 0, no covariate). For planted-ranking checks: ``soft`` is
    None."""
    if nu < 0:
        raise ValueError("nu must be >= 0")
    if not pairs:
        return []
    theta_a = np.array([strengths[a] for _, a, _ in pairs], dtype=float)
    theta_b = np.array([strengths[b] for _, _, b in pairs], dtype=float)
    size = lengths or {}
    length_a = np.array([size.get((p, a), 0) for p, a, _ in pairs], dtype=float)
    length_b = np.array([size.get((p, b), 0) for p, _, b in pairs], dtype=float)
    x = length_difference(length_a, length_b)
    with np.errstate(divide="ignore"):
        terms = np.stack(
            [theta_a + gamma * x / 2, theta_b - gamma * x / 2, np.log(nu) + (theta_a + theta_b) / 2], axis=1
        )
    probs = np.exp(terms - terms.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    draw = rng.random(len(pairs))
    outcome = np.where(
        draw < probs[:, A_WON], 1.0, np.where(draw < probs[:, A_WON] + probs[:, TIE], 0.5, 0.0)
    )
    return [
        Comparison(
            prompt=p,
            system_a=a,
            system_b=b,
            outcome=float(o),
            soft=None,
            length_a=int(la),
            length_b=int(lb),
        )
        for (p, a, b), o, la, lb in zip(pairs, outcome, length_a, length_b, strict=True)
    ]
