"""Whether what a run claims is false: an adaptive stop's "resolved" order, a board's
``resolved`` pairs, and the plain 95% boards a user would read if each wave showed one.
"""

import itertools

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.leaderboard import fit_board, resolved_pairs, shared_ranks
from simulations.designs.adaptive import AdaptiveOutcome


def false_claim(strengths: dict[str, float], order: list[str], top_k: int | None) -> bool:
    """Whether a "resolved" stop's claim about the fitted ``order`` (best first) is false: a
    claimed pair (adjacent ones; with ``top_k``, best k against the rest) that the planted
    strengths have equal or the other way round."""
    if top_k is None:
        claimed = list(itertools.pairwise(order))
    else:
        claimed = [(a, b) for a in order[:top_k] for b in order[top_k:]]
    return any(strengths[a] <= strengths[b] for a, b in claimed)


def false_pair(strengths: dict[str, float], resolved: list[list[str]]) -> bool:
    """Whether a board's ``resolved`` list ([higher, lower] pairs) holds a pair the planted
    strengths have equal or the other way round."""
    return any(strengths[higher] <= strengths[lower] for higher, lower in resolved)


def watched(strengths: dict[str, float], outcome: AdaptiveOutcome, anchor: str) -> bool:
    """Whether a plain 95% board (``leaderboard``'s own, one look) refit after every wave of
    ``outcome``, the last included, ever lists a pair the planted strengths deny: what a user
    would read if each wave showed a plain list."""
    finished: list[Comparison] = []
    for wave in outcome.waves:
        finished += wave
        # The board's fit and resolved pairs alone (``leaderboard`` builds the whole table).
        board = fit_board(finished, list(strengths), anchor=anchor)
        order, ranks = shared_ranks([BASE_RATING + ELO_SCALE * float(v) for v in board.log_strengths()])
        if false_pair(strengths, resolved_pairs(board, order, ranks)):
            return True
    return False
