"""``data.label_fraction``: keep the human labels of a seeded random share of the labelled items."""

import random
from collections.abc import Sequence
from dataclasses import replace

from chateval.data.items import DirectItem, Item, PairwiseItem


def is_labelled(item: Item) -> bool:
    """Whether the item carries a human judgement (pairwise: a label; direct: scores)."""
    return item.label is not None if isinstance(item, PairwiseItem) else bool(item.scores)


def keep_labels(items: Sequence[Item], fraction: float, seed: int) -> list[Item]:
    """The items, with the human labels of all but round(fraction x labelled) of the labelled
    ones removed; which ones are kept is drawn with ``seed`` (the same for the same items)."""
    if fraction >= 1.0:
        return list(items)
    labelled = [i for i, item in enumerate(items) if is_labelled(item)]
    count = int(fraction * len(labelled) + 0.5)
    kept = set(random.Random(f"chateval-labels:{seed}").sample(labelled, count))
    return [item if i in kept or not is_labelled(item) else _unlabelled(item) for i, item in enumerate(items)]


def _unlabelled(item: Item) -> Item:
    if isinstance(item, DirectItem):
        return replace(item, scores={})
    return replace(item, label=None)
