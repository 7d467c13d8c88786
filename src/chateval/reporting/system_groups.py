"""Which systems a leaderboard does not tell apart, as group letters (a compact letter display,
Piepho 2004): two systems share a letter exactly when the board did not resolve their rating
difference (its ``resolved`` pairs, 95% jointly; an adaptive run's 98.75%), so "a", "ab", "b"
reads as: the first and the last are told apart, the middle one from neither. Read from
metrics.json alone: nothing refit."""

import string
from collections.abc import Sequence

LETTERS = string.ascii_lowercase + string.ascii_uppercase


def _maximal_cliques(neighbours: dict[int, set[int]]) -> list[set[int]]:
    """Every maximal set of systems no two of which are told apart (Bron-Kerbosch with a pivot;
    a board's few dozen systems give few such sets)."""
    found: list[set[int]] = []

    def extend(clique: set[int], candidates: set[int], excluded: set[int]) -> None:
        if not candidates and not excluded:
            found.append(clique)
            return
        pivot = max(candidates | excluded, key=lambda v: len(neighbours[v] & candidates))
        for v in sorted(candidates - neighbours[pivot]):
            extend(clique | {v}, candidates & neighbours[v], excluded & neighbours[v])
            candidates = candidates - {v}
            excluded = excluded | {v}

    extend(set(), set(neighbours), set())
    return found


def group_letters(systems: Sequence[str], resolved: Sequence[Sequence[str]]) -> dict[str, str]:
    """Each system's letters, ``systems`` in rank order (the first group, holding the top
    system, is "a"); systems sharing a letter have no resolved difference between them. Past 52
    groups the letters run out and the rest are shown as "+"."""
    index = {name: i for i, name in enumerate(systems)}
    apart = {frozenset((index[a], index[b])) for a, b in resolved if a in index and b in index}
    neighbours = {
        i: {j for j in range(len(systems)) if j != i and frozenset((i, j)) not in apart}
        for i in range(len(systems))
    }
    cliques = sorted(_maximal_cliques(neighbours), key=sorted)
    letters = {name: "" for name in systems}
    for k, clique in enumerate(cliques):
        mark = LETTERS[k] if k < len(LETTERS) else "+"
        for i in sorted(clique):
            if not letters[systems[i]].endswith(mark):
                letters[systems[i]] += mark
    return letters
