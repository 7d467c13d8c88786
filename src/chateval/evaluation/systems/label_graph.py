"""Which groups of systems the human labels alone cannot place against the rest.

The labels' Bradley-Terry ratings are finite only when the labelled comparisons, read as a
graph with an edge from each winner to its loser (a tie: an edge both ways), are strongly
connected: every system reaches every other (Zermelo 1929; Ford 1957, "Solution of a ranking
problem from binary comparisons"). Otherwise some group of systems never lost a labelled
comparison to the systems outside it (or never won one, or was never compared with them), and
only a prior bounds how far above (below) the rest it is. The groups are the graph's strongly
connected components that have no labelled loss to the rest (``won``), no labelled win against
it (``lost``), or no labelled comparison with it (``apart``).
"""

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from chateval.schema.calibrated import OneSidedGroup, Side


def one_sided_groups(
    systems: Sequence[str], a: np.ndarray, b: np.ndarray, outcome: np.ndarray
) -> list[OneSidedGroup]:
    """The groups of the module doc, from the labelled comparisons only: ``a[i]`` and ``b[i]``
    index ``systems``, ``outcome[i]`` is A's share (1 win, 0.5 tie, 0 loss). None when the
    labels connect every system both ways (or name fewer than two systems)."""
    size = len(systems)
    beat = np.zeros((size, size), dtype=bool)  # beat[i, j]: i won or tied against j
    for first, second, value in zip(a, b, outcome, strict=True):
        if value >= 0.5:
            beat[first, second] = True
        if value <= 0.5:
            beat[second, first] = True
    count, component = connected_components(csr_matrix(beat), directed=True, connection="strong")
    if count < 2:
        return []
    groups: list[OneSidedGroup] = []
    for label in range(count):
        inside = component == label
        wins_out = bool(beat[np.ix_(inside, ~inside)].any())
        losses_out = bool(beat[np.ix_(~inside, inside)].any())
        if wins_out and losses_out:
            continue  # bounded on both sides
        side: Side = "apart" if not (wins_out or losses_out) else ("won" if wins_out else "lost")
        groups.append({"systems": [s for s, keep in zip(systems, inside, strict=True) if keep], "side": side})
    return groups
