"""The targeted part of an adaptive wave: which pairs of systems to compare next so that the
fitted ranking's expected number of pairs in the wrong order falls most.

The *targets* are pairs of systems (all of them, or with ``top_k`` the pairs across the
boundary between the best k and the rest), each weighted by the probability that the fitted
order has them the wrong way round, Phi(-|d| / sd) with d the fitted difference and sd its
model-based standard deviation: the weighted sum is the expected number of pairs in the wrong
order, which is what Kendall's tau counts. One more comparison of systems i and j adds
w_ij x x^T to the information (x = e_i - e_j, w_ij the variance of one decision's outcome under
the fitted model: its Fisher information about theta_i - theta_j), which lowers a target
contrast c's variance by (c' S x)^2 w / (1 + w x' S x) (Sherman-Morrison, S the covariance).
Each pick is the pair with the largest weighted reduction; S is then updated as if it had been
debated, so the picks spread over the pairs that matter instead of repeating one.
"""

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.stats import norm

from chateval.evaluation.systems.leaderboard import FittedBoard

Pair = tuple[str, str]


def targeted_pairs(
    board: FittedBoard, targets: Sequence[tuple[int, int]], free: Mapping[Pair, int], size: int
) -> list[Pair]:
    """Up to ``size`` picks, in order, among the pairs of ``free`` (a pair of system names,
    sorted, and how many of its comparisons are left to choose; a pair is picked at most that
    often). ``targets``: the pairs the ranking is about, as indices into ``board.arrays.systems``."""
    names = list(board.arrays.systems)
    theta = board.log_strengths()
    covariance = board.uncertainty.model.copy()
    contrasts = np.array([board.contrast(i, j) for i, j in targets])
    weights = np.array(
        [
            norm.cdf(-abs(theta[i] - theta[j]) / math.sqrt(max(c @ covariance @ c, 1e-12)))
            for (i, j), c in zip(targets, contrasts, strict=True)
        ]
    )
    info = outcome_information(board)
    left = {pair: count for pair, count in free.items() if count > 0}
    # Each pair's contrast and information, once: the picks below only update the covariance.
    vectors = {}
    for pair in left:
        i, j = names.index(pair[0]), names.index(pair[1])
        vectors[pair] = (board.contrast(i, j), float(info[i, j]))
    picks: list[Pair] = []
    for _ in range(size):
        if not left:
            break
        best, best_gain, best_x = None, -1.0, None
        for pair in sorted(left):
            x, w = vectors[pair]
            sx = covariance @ x
            gain = float(np.sum(weights * (contrasts @ sx) ** 2) * w / (1 + w * x @ sx))
            if gain > best_gain + 1e-12:
                best, best_gain, best_x = pair, gain, (x, w, sx)
        assert best is not None and best_x is not None
        x, w, sx = best_x
        covariance = covariance - w * np.outer(sx, sx) / (1 + w * x @ sx)
        picks.append(best)
        left[best] -= 1
        if not left[best]:
            del left[best]
    return picks


def outcome_information(board: FittedBoard) -> np.ndarray:
    """w[i, j]: the variance of one decision's outcome (1, 1/2, 0) between systems i and j under
    the fitted model, its Fisher information about theta_i - theta_j."""
    theta = board.log_strengths()
    nu = math.exp(board.params[board.design.tie_column]) if board.design.tie_column is not None else 0.0
    a, b = theta[:, None], theta[None, :]
    tie = nu * np.exp((a + b) / 2)
    total = np.exp(a) + np.exp(b) + tie
    p_win, p_tie = np.exp(a) / total, tie / total
    mean = p_win + p_tie / 2
    out: np.ndarray = p_win + p_tie / 4 - mean**2
    return out
