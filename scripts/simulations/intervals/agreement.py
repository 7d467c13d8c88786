"""**accuracy** and **kappa** (``pairwise_metrics``, as every run's agreement with human labels):
n labelled items with human labels drawn from A 45%, B 40%, tie 15%; the panel's label is the
human one with probability ``agreement``, else an independent draw from A 50%, B 40%, tie 10%
(agreement 0: a panel that reads nothing). The truth is the population's accuracy and kappa.
More rows plant kappa itself (``KAPPA_MIXES``, 10 to 200 items): -0.5, -0.3 and 0.3 on that
mix, and -0.3 to 0.9 where the humans and the panel's own draws are both A 80%, B 15%, tie 5%
(the most contrary panel reaches only -0.33 there). A panel below chance gives, with
probability ``contrary``, a label other than the human one (drawn from its own mix without
the human's); above chance it copies the human label; the probability is solved for the
kappa, and the truth computed from the joint distribution of the two labels
(``planted_agreement``). With ``two orders`` each item gives two rows (its two answer
orders, as a model's rows are pooled): the second repeats the first label with probability
0.7, else is drawn anew, and the item is one cluster.
"""

import numpy as np

from chateval.evaluation.agreement.metrics import pairwise_metrics
from simulations.intervals.rows import Rows, summarise

LABEL_NAMES = ["A", "B", "tie"]
HUMAN_MIX = np.array([0.45, 0.40, 0.15])
PANEL_MIX = np.array([0.50, 0.40, 0.10])
SKEWED_MIX = np.array([0.80, 0.15, 0.05])
# The label mixes (the humans', the panel's own draws) of the planted-kappa rows, and the kappas
# planted in each; the balanced mix's 0, 0.51 and 0.90 are the ``panel agrees`` rows. The most
# contrary panel reaches -0.62 on the balanced mix and only -0.33 on the skewed one.
KAPPA_MIXES = {
    "A 45/B 40/tie 15": (HUMAN_MIX, PANEL_MIX, (-0.5, -0.3, 0.3)),
    "A 80/B 15/tie 5": (SKEWED_MIX, SKEWED_MIX, (-0.3, 0.0, 0.3, 0.6, 0.9)),
}


def planted_agreement(
    agreement: float, contrary: float = 0.0, humans: np.ndarray = HUMAN_MIX, own: np.ndarray = PANEL_MIX
) -> tuple[float, float]:
    """The population's accuracy and kappa of a panel that copies the human label with
    probability ``agreement``, picks another label with probability ``contrary`` (drawn from
    ``own`` without the human's) and otherwise draws from ``own``, against humans drawn from
    ``humans``: from the joint distribution of the human label i and the panel's j,
    humans_i (agreement [i = j] + contrary own_j [i != j] / (1 - own_i) + rest own_j)."""
    other = own[None, :] * (1 - np.eye(3)) / (1 - own)[:, None]
    given = agreement * np.eye(3) + contrary * other + (1 - agreement - contrary) * own[None, :]
    joint = humans[:, None] * given
    accuracy, chance = float(np.trace(joint)), float(joint.sum(axis=1) @ joint.sum(axis=0))
    return accuracy, (accuracy - chance) / (1 - chance)


def panel_for_kappa(kappa: float, humans: np.ndarray, own: np.ndarray) -> tuple[float, float]:
    """(agreement, contrary) of the panel whose population kappa is ``kappa``: one that copies
    the humans (kappa >= 0) or contradicts them (kappa < 0), solved on ``planted_agreement``."""
    from scipy.optimize import brentq

    def off(agreement: float, contrary: float) -> float:
        return planted_agreement(agreement, contrary, humans, own)[1] - kappa

    if kappa >= 0:
        return float(brentq(lambda a: off(a, 0.0), 0.0, 1.0, xtol=1e-14)), 0.0
    return 0.0, float(brentq(lambda c: off(0.0, c), 0.0, 1.0, xtol=1e-14))


def other_labels(humans: np.ndarray, own: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A label other than each human one, drawn from ``own`` without it."""
    weights = np.where(np.arange(3) == humans[:, None], 0.0, own[None, :])
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    # np.minimum: a draw that rounding left above the last cumulative weight (1 - 1e-16)
    drawn: np.ndarray = np.minimum(np.sum(rng.random(len(humans))[:, None] > cumulative, axis=1), 2)
    return drawn


def panel_labels(
    humans: np.ndarray,
    agreement: float,
    rng: np.random.Generator,
    contrary: float = 0.0,
    own: np.ndarray = PANEL_MIX,
) -> np.ndarray:
    """The panel of ``planted_agreement``'s labels on items whose human labels are ``humans``
    (without ``contrary``, the draws of earlier releases, so that their rows reproduce)."""
    drawn = rng.choice(3, size=len(humans), p=own)
    u = rng.random(len(humans))
    labels = np.where(u < agreement, humans, drawn)
    if contrary:
        contradicts = (u >= agreement) & (u < agreement + contrary)
        labels = np.where(contradicts, other_labels(humans, own, rng), labels)
    return labels


def agreement_run(
    items: int,
    agreement: float,
    two_orders: bool,
    seed: int,
    rng: np.random.Generator,
    contrary: float = 0.0,
    mixes: tuple[np.ndarray, np.ndarray] = (HUMAN_MIX, PANEL_MIX),
) -> list[tuple[bool, float]]:
    """Whether the accuracy's and the kappa's intervals hold the population's values, and
    their widths, for the panel of ``planted_agreement`` with ``mixes`` (humans, its own)."""
    human_mix, own = mixes
    humans = rng.choice(3, size=items, p=human_mix)
    labels = panel_labels(humans, agreement, rng, contrary, own)
    groups = None
    if two_orders:
        repeated = rng.random(items) < 0.7  # drawn before the new labels: earlier rows reproduce
        second = np.where(repeated, labels, panel_labels(humans, agreement, rng, contrary, own))
        humans, labels = np.concatenate([humans, humans]), np.concatenate([labels, second])
        groups = [f"q{i}" for i in range(items)] * 2
    truth = [LABEL_NAMES[h] for h in humans]
    predicted = [LABEL_NAMES[x] for x in labels]
    metrics = pairwise_metrics(truth, predicted, seed, groups, "items")
    out = []
    planted = planted_agreement(agreement, contrary, human_mix, own)
    for name, value in zip(("accuracy", "kappa"), planted, strict=True):
        low, high = metrics[name]["ci95"]  # type: ignore[literal-required]
        out.append((low - 1e-12 <= value <= high + 1e-12, high - low))
    return out


def agreement_rows(reps: int, rows: Rows) -> None:
    for two_orders in (False, True):
        for agreement in (0.0, 0.5, 0.9):
            for items in (5, 10, 16, 40, 200):
                rng = np.random.default_rng([items, int(10 * agreement), int(two_orders)])
                runs = [agreement_run(items, agreement, two_orders, seed, rng) for seed in range(reps)]
                setting = f"{items} items" + (" x 2 orders" if two_orders else "")
                setting += f", panel agrees {agreement:.0%}"
                for k, statistic in enumerate(("accuracy", "kappa")):
                    summarise(statistic, setting, [run[k] for run in runs], rows)
    for two_orders in (False, True):
        for m, (mix, (humans, own, kappas)) in enumerate(KAPPA_MIXES.items()):
            for kappa in kappas:
                agreement, contrary = panel_for_kappa(kappa, humans, own)
                for items in (10, 20, 40, 200):
                    rng = np.random.default_rng([items, int(two_orders), m + 1, round(100 * (kappa + 1))])
                    runs = [
                        agreement_run(items, agreement, two_orders, seed, rng, contrary, (humans, own))
                        for seed in range(reps)
                    ]
                    setting = f"{items} items" + (" x 2 orders" if two_orders else "")
                    setting += f", humans {mix}, kappa {kappa:+.1f}"
                    for k, statistic in enumerate(("accuracy", "kappa")):
                        summarise(statistic, setting, [run[k] for run in runs], rows)
