"""**paired accuracy difference** and **paired kappa difference** (``compare_pairwise``, as
``report A B``, ``compare``, soft against hard and blind against final use it): two panels of
the kind ``agreement`` plants on the same items, agreeing with the humans alike (B repeating
A's label on 80% or 90% of the items, or never) or not (90% and 50%, 0% and 90%), and two
independent panels of planted kappas where chance agreement moves (``PAIRED_KAPPAS``); the
truth is the difference of their population values.
"""

import numpy as np

from chateval.evaluation.agreement.paired import compare_pairwise
from simulations.intervals.agreement import (
    HUMAN_MIX,
    KAPPA_MIXES,
    LABEL_NAMES,
    panel_for_kappa,
    panel_labels,
    planted_agreement,
)
from simulations.intervals.rows import Rows, summarise

# Two panels on the same items: (panel A's agreement, panel B's, the share of items where B
# repeats A's label instead of drawing its own; only with equal agreements, so that B's own
# behaviour, and so the truth, is unchanged).
PAIRED_PANELS = [(0.5, 0.5, 0.8), (0.9, 0.9, 0.9), (0.5, 0.5, 0.0), (0.9, 0.5, 0.0), (0.0, 0.9, 0.0)]


def paired_run(
    items: int, panels: tuple[float, float, float], rng: np.random.Generator
) -> list[tuple[bool, float]]:
    """Whether the paired accuracy and kappa differences (B - A) hold the planted ones."""
    first, second, repeats = panels
    humans = rng.choice(3, size=items, p=HUMAN_MIX)
    labels_a = panel_labels(humans, first, rng)
    labels_b = np.where(rng.random(items) < repeats, labels_a, panel_labels(humans, second, rng))
    found = compare_pairwise(*([LABEL_NAMES[x] for x in side] for side in (humans, labels_a, labels_b)))
    planted = np.subtract(planted_agreement(second), planted_agreement(first))
    out = []
    for name, truth in zip(("accuracy", "kappa"), planted, strict=True):
        low, high = found[name]["difference"]["ci95"]  # type: ignore[literal-required]
        out.append((low - 1e-12 <= truth <= high + 1e-12, high - low))
    return out


# Paired kappa differences where chance agreement moves: panel A contradicts the humans, panel
# B agrees, per label mix of ``KAPPA_MIXES`` (the planted kappas of A and B).
PAIRED_KAPPAS = {"A 45/B 40/tie 15": (-0.5, 0.3), "A 80/B 15/tie 5": (-0.3, 0.3)}


def paired_kappa_run(items: int, mix: str, rng: np.random.Generator) -> list[tuple[bool, float]]:
    """``paired_run`` for two independent panels of planted kappas ``PAIRED_KAPPAS[mix]``."""
    humans_mix, own, _ = KAPPA_MIXES[mix]
    humans = rng.choice(3, size=items, p=humans_mix)
    sides, planted = [], []
    for kappa in PAIRED_KAPPAS[mix]:
        agreement, contrary = panel_for_kappa(kappa, humans_mix, own)
        sides.append(panel_labels(humans, agreement, rng, contrary, own))
        planted.append(planted_agreement(agreement, contrary, humans_mix, own))
    found = compare_pairwise(*([LABEL_NAMES[x] for x in side] for side in (humans, *sides)))
    out = []
    for k, name in enumerate(("accuracy", "kappa")):
        low, high = found[name]["difference"]["ci95"]  # type: ignore[literal-required]
        truth = planted[1][k] - planted[0][k]
        out.append((low - 1e-12 <= truth <= high + 1e-12, high - low))
    return out


def paired_rows(reps: int, rows: Rows) -> None:
    for panels in PAIRED_PANELS:
        for items in (5, 10, 16, 40, 200):
            rng = np.random.default_rng([items, *(int(10 * x) for x in panels)])
            runs = [paired_run(items, panels, rng) for _ in range(reps)]
            first, second, repeats = panels
            setting = f"{items} items, panels agreeing {first:.0%} and {second:.0%}"
            setting += f", B repeats A on {repeats:.0%}" if repeats else ""
            for k, statistic in enumerate(("paired accuracy difference", "paired kappa difference")):
                summarise(statistic, setting, [run[k] for run in runs], rows)
    for m, (mix, (first, second)) in enumerate(PAIRED_KAPPAS.items()):
        for items in (10, 20, 40, 200):
            rng = np.random.default_rng([items, m + 1, 7])
            runs = [paired_kappa_run(items, mix, rng) for _ in range(reps)]
            setting = f"{items} items, humans {mix}, panels of kappa {first:+.1f} and {second:+.1f}"
            for k, statistic in enumerate(("paired accuracy difference", "paired kappa difference")):
                summarise(statistic, setting, [run[k] for run in runs], rows)
