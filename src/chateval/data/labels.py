"""``data.label_fraction``: keep the human labels of a seeded random share of the labelled items."""

import random
from collections.abc import Sequence
from dataclasses import replace

from chateval.core.items import DirectItem, Item, PairwiseItem


def is_labelled(item: Item) -> bool:
    """Whether the item carries a human judgement (pairwise: a label; direct: scores)."""
    return item.label is not None if isinstance(item, PairwiseItem) else bool(item.scores)


def kept_positions(labelled: Sequence[bool], fraction: float, seed: int) -> set[int]:
    """Which labelled positions keep their label: round(fraction x labelled) of them, drawn with
    ``seed`` (the same for the same sequence, so a run's items and its records agree)."""
    positions = [i for i, has in enumerate(labelled) if has]
    count = int(fraction * len(positions) + 0.5)
    return set(random.Random(f"chateval-labels:{seed}").sample(positions, count))


def keep_labels(items: Sequence[Item], fraction: float, seed: int) -> list[Item]:
    """The items, with the human labels of all but round(fraction x labelled) of the labelled
    ones removed (``kept_positions``)."""
    if fraction >= 1.0:
        return list(items)
    kept = kept_positions([is_labelled(item) for item in items], fraction, seed)
    return [item if i in kept or not is_labelled(item) else _unlabelled(item) for i, item in enumerate(items)]


def _unlabelled(item: Item) -> Item:
    if isinstance(item, DirectItem):
        return replace(item, scores={})
    return replace(item, label=None)
