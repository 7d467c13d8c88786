"""Do the 95% intervals of accuracy and kappa, the rank correlations, the panel's ratings and
win rates, the length share, the calibrated estimates, the direct scores' means and the
compared judges' tau bounds hold their 95%, few prompts and few labels included? (Designs of
many systems, adaptive ones included, are in simulate_designs.py.)

- **accuracy** and **kappa** (``pairwise_metrics``, as every run's agreement with human labels):
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
- **paired accuracy difference** and **paired kappa difference** (``compare_pairwise``, as
  ``report A B``, ``compare``, soft against hard and blind against final use it): two panels of
  the kind above on the same items, agreeing with the humans alike (B repeating A's label on
  80% or 90% of the items, or never) or not (90% and 50%, 0% and 90%); the truth is the
  difference of their population values.
- **paired Spearman difference** and **paired Kendall difference** (``compare_direct``): the
  design below judged by two panels on the same responses, B's noise half A's; the truth is the
  difference of their correlations over 240,000 responses.
- **Spearman** and **Kendall** (``direct_metrics``, as a direct run's agreement): k units
  (items, or groups of 6 responses as Topical-Chat's dialogues) with a latent quality x (a
  group effect shared by its responses, plus each response's own); the human score is x plus
  noise cut into 1-3, the panel's 0.5 x plus noise cut into 1-5 (noise sd 0.5 and 0.8; also
  a ``near-perfect panel``, 0.1 and 0.1, Spearman 0.91, and a ``nearer-perfect`` one, 0.05 and
  0.05, Spearman 0.95; and over single items a ``panel scoring 10% at random``, 0.05 and 0.05
  but a uniform draw from 1-5 on 10% of the responses, Spearman 0.82). The truth is each rank
  correlation over 240,000 responses of the same design; cases where a side came out constant
  (undefined, no interval) are left out of the row.

For the other statistics, four systems with planted log-strengths 0.6, 0.2, -0.2, -0.6 meet
in all pairs on every prompt; decisions are drawn from the Davidson model (ties with nu = NU,
the leaderboard's own model). Each row reports, over the repetitions, the share of intervals
that hold the true value and their mean width:

- **length share** (``win_rates``' length bias): every answer gets a random length; the panel's
  decisions do not depend on it on average, so the longer answer's true share of decisive
  comparisons is 0.5. With ``prompt effect`` each prompt has its own length preference
  gamma_p ~ N(0, 1) (some prompts favour the longer answer, some the shorter, 0 on average): the
  comparisons of a prompt then move together, which is what the prompt-clustered design effect
  is for.
- **calibrated pair** (``ppi_mean`` with bounds [0, 1], as a run's per-pair calibrated win
  rates): 40 comparisons of one pair, of which n carry a human label; the human outcome is drawn
  from the model (the truth is the pair's planted win rate, P(win) + P(tie) / 2), the panel's
  verdict equals it with probability ``agreement`` and is otherwise an independent draw from a
  panel that sees the systems as equal.
- **calibrated field win rates** (``calibrated_leaderboard``): all pairs on 40 prompts (240
  comparisons), a seeded random share of them labelled (runs until a row has its cases: a
  refused run adds none); the truth is each system's mean planted win rate against the other
  three.
- **calibrated ratings** (``calibrated_leaderboard``'s Bradley-Terry ratings, with their prior
  of one tie per system against the anchor): the four systems on 40 prompts with 10 to 200
  labels, and three systems on 20 prompts (60 comparisons) of which one is far behind (log-
  strengths 0, -0.2, -2.0: with 10 labels it often loses every labelled comparison, where an
  unpenalised fit has no finite rating), and the four systems again before a panel partial to
  the worst one (``FAVOURS_D``). The panel copies the human outcome 80% of the time or never;
  otherwise it judges the systems as equal (or, partial, as if d were far the best). The truth
  is what the ratings estimate: the logistic fit (ties half) to each
  comparison's expected outcome under the planted model; a row counts every non-anchor
  system's interval, and names the runs whose leaderboard was refused (a system with fewer
  than 2 labelled comparisons, or a slice the test of ``label_slice`` puts at p < 0.001).
- both calibrated families also with a panel that abstains (``ABSTAINS``: every verdict failed,
  on 60% of the comparisons the humans tie and 22.5% of the others, about 30% in all): those
  comparisons reach the leaderboard as a run writes them, undecided, the panel's prediction a
  tie. Every calibrated row counts the runs whose labelled slice, random by construction,
  ``label_slice`` flagged as not random (p < 0.05): its false alarms.

- **rating** and **win rate** (``leaderboard`` and ``win_rates``, the panel alone): the four
  systems in all pairs on 2 to 40 prompts, answer order drawn at random; with ``prompt effect``
  each system's log-strength on a prompt is its own plus N(0, 0.7^2). The truth of a rating is
  the fit on 20,000 prompts of the same design; of a win rate, the planted one averaged over the
  prompt effect.
- **field win rate (8 systems)** and **pair win rate (8 systems)** (``win_rates``' per-system
  and per-pair rates, family ``field-win-rates``): 8 systems with log-strengths 1.4 to -1.4, 0.4
  apart, in all pairs on 2 to 40 prompts, answer order drawn at random; each system's
  log-strength on a prompt is its own plus N(0, sd^2), sd 0, 0.5, 1 or 1.5, so a system's 7
  comparisons on a prompt move together; on 2 to 5 prompts also each pair 3 times a prompt (``x 3
  per pair``), the 3 sharing the prompt's answers. The truth of a pair's rate is its planted win
  rate averaged over 10^6 seeded draws of the prompt effect; of a system's, the mean of its 7.
- **tau bounds (compare)** (``judges.compare_boards``): two judges rank 4 or 8 systems on the
  same 5 to 80 prompts, judge B's strengths A's (or A's plus N(0, 0.5^2) each; or A's with the
  middle two equal); the truth is tau-a between the two planted orders.
- **direct mean** and **direct paired difference** (``direct_systems``): three systems scored
  1-10 on 2 to 40 prompts, each score its system's centre plus a prompt effect shared by the
  systems plus its own noise, rounded and held within 1-10: spread out (centres 4, 6, 8), or
  near the top (9.5, 9.8, 8 with little noise, most scores 10). The truth is the mean over a
  million prompts.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/simulate_intervals.py --repetitions 2000 \\
        -o docs/performance/intervals.json
"""

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import chateval.evaluation.systems.against_baseline as against_baseline_module
from chateval.evaluation.agreement.judges import compare_boards
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.agreement.paired import compare_direct, compare_pairwise
from chateval.evaluation.systems.against_baseline import lc_not_estimable, lc_win_rate
from chateval.evaluation.systems.calibrated_leaderboard import CalibratedLeaderboard, calibrated_leaderboard
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.direct_systems import ScoredResponse, direct_systems
from chateval.evaluation.systems.leaderboard import leaderboard
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.evaluation.systems.ppi_bradley_terry import bradley_terry_design, classical_logistic
from chateval.evaluation.systems.proportion_interval import ProportionInterval
from chateval.evaluation.systems.win_rates import win_rates

NU = 0.5
STRENGTHS = {"a": 0.6, "b": 0.2, "c": -0.2, "d": -0.6}
EQUAL = dict.fromkeys(STRENGTHS, 0.0)
PAIRS = list(itertools.combinations(STRENGTHS, 2))
PROMPT_SPREAD = 0.7  # sd of a system's own log-strength on one prompt, with ``prompt effect``
TRUTH_PROMPTS = 20_000  # prompts of the large run whose fit is the panel-only ratings' truth


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


# panel -> (the human scores' noise, the panel's, the share of responses it scores at random,
# the responses per unit simulated): a typical panel, and panels that rank almost as the humans
# do, where a small sample often ranks perfectly though the population does not and the
# interval's floors matter (a perfect ranking counted in groups, ``misranked_bounds``)
CORRELATION_PANELS: dict[str, tuple[float, float, float, tuple[int, ...]]] = {
    "": (0.5, 0.8, 0.0, (1, 6)),
    ", near-perfect panel": (0.1, 0.1, 0.0, (1, 6)),
    ", nearer-perfect panel": (0.05, 0.05, 0.0, (1, 6)),
    ", panel scoring 10% at random": (0.05, 0.05, 0.1, (1,)),
}


def scored_responses(
    units: int,
    per_unit: int,
    rng: np.random.Generator,
    noises: tuple[float, ...] = (0.8,),
    human_noise: float = 0.5,
    random_share: float = 0.0,
) -> tuple[np.ndarray, list[np.ndarray], list[str]]:
    """Human scores (1-3), a panel's (1-5) per noise level in ``noises`` (drawn in that order,
    on the same responses; each scoring a ``random_share`` of them uniformly at random) and
    each response's group, of ``units`` groups of ``per_unit`` responses (the module doc)."""
    rows = units * per_unit
    quality = np.repeat(rng.normal(0.0, 0.8, units), per_unit) + rng.normal(0.0, 1.0, rows)
    human = np.digitize(quality + rng.normal(0.0, human_noise, rows), [-0.8, 0.8]) + 1.0
    cuts = [-1.2, -0.4, 0.4, 1.2]
    panels = [np.digitize(0.5 * quality + rng.normal(0.0, sd, rows), cuts) + 1.0 for sd in noises]
    if random_share:  # drawn only then, so the other panels' rows rerun digit for digit
        panels = [np.where(rng.random(rows) < random_share, rng.integers(1, 6, rows), p) for p in panels]
    return human, panels, [f"g{g}" for g in np.repeat(np.arange(units), per_unit)]


def planted_correlations(
    per_unit: int, noises: tuple[float, float] = (0.5, 0.8), random_share: float = 0.0
) -> tuple[float, float]:
    """Spearman and Kendall tau-b of the design over 240,000 responses, with the human and
    panel ``noises`` and the panel's ``random_share``."""
    from scipy.stats import kendalltau, spearmanr

    human_noise, panel_noise = noises
    rng = np.random.default_rng(per_unit)
    units = 240_000 // per_unit
    human, (panel,), _ = scored_responses(units, per_unit, rng, (panel_noise,), human_noise, random_share)
    return float(spearmanr(human, panel).statistic), float(kendalltau(human, panel).statistic)


def correlation_run(
    units: int,
    per_unit: int,
    truth: tuple[float, float],
    seed: int,
    rng: np.random.Generator,
    noises: tuple[float, float] = (0.5, 0.8),
    random_share: float = 0.0,
) -> list[tuple[bool, float]] | None:
    """Whether Spearman's and Kendall's intervals hold the truth, and their widths; None when
    either has no interval."""
    human_noise, panel_noise = noises
    scored_rows = scored_responses(units, per_unit, rng, (panel_noise,), human_noise, random_share)
    human, (panel,), groups = scored_rows
    grouping = {"score": groups} if per_unit > 1 else None
    scored = direct_metrics({"score": list(human)}, {"score": list(panel)}, seed, grouping)
    out = []
    for name, planted in zip(("spearman", "kendall"), truth, strict=True):
        ci = scored["dimensions"]["score"][name]["ci95"]  # type: ignore[literal-required]
        if ci is None:
            return None
        out.append((ci[0] <= planted <= ci[1], ci[1] - ci[0]))
    return out


def two_panels(
    units: int, per_unit: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``scored_responses``' design judged by two panels on the same responses: A's noise 0.8
    (as there), B's 0.4 (a better judge)."""
    human, (first, second), groups = scored_responses(units, per_unit, rng, (0.8, 0.4))
    return human, first, second, groups


def planted_correlation_differences(per_unit: int) -> tuple[float, float]:
    """Panel B's Spearman and Kendall minus panel A's over 240,000 responses."""
    from scipy.stats import kendalltau, spearmanr

    human, a, b, _ = two_panels(240_000 // per_unit, per_unit, np.random.default_rng(per_unit + 7))
    return (
        float(spearmanr(human, b).statistic - spearmanr(human, a).statistic),
        float(kendalltau(human, b).statistic - kendalltau(human, a).statistic),
    )


def paired_correlation_run(
    units: int, per_unit: int, truth: tuple[float, float], seed: int, rng: np.random.Generator
) -> list[tuple[bool, float]] | None:
    """Whether the differences' intervals hold the truth, and their widths; None when either
    has no interval."""
    human, a, b, groups = two_panels(units, per_unit, rng)
    found = compare_direct(
        {"score": list(human)}, {"score": list(a)}, {"score": list(b)}, seed, groups if per_unit > 1 else None
    )
    out = []
    for name, planted in zip(("spearman", "kendall"), truth, strict=True):
        ci = found["dimensions"]["score"][name]["difference"]["ci95"]  # type: ignore[literal-required]
        if ci is None:
            return None
        out.append((ci[0] <= planted <= ci[1], ci[1] - ci[0]))
    return out


def planted_win_rate(a: str, b: str) -> float:
    """P(a wins) + P(tie) / 2 under the Davidson model."""
    pa, pb = math.exp(STRENGTHS[a]), math.exp(STRENGTHS[b])
    tie = NU * math.sqrt(pa * pb)
    return (pa + tie / 2) / (pa + pb + tie)


def length_share_run(
    prompts: int, prompt_effect: bool, rng: np.random.Generator
) -> tuple[bool, float] | None:
    """Whether the longer answer's share interval holds 0.5, and its width; None: no decisive
    comparison between answers of different lengths."""
    comparisons: list[Comparison] = []
    for p in range(prompts):
        lengths = {s: int(rng.integers(20, 400)) for s in STRENGTHS}
        gamma = float(rng.normal(0.0, 1.0)) if prompt_effect else 0.0
        pairs = [(f"p{p}", a, b) for a, b in PAIRS]
        comparisons += simulate_davidson(
            STRENGTHS, NU, pairs, rng, gamma=gamma, lengths={(f"p{p}", s): n for s, n in lengths.items()}
        )
    share = win_rates(comparisons)["length_bias"]["share"]
    if share is None:
        return None
    low, high = share["ci95"]
    return low <= 0.5 <= high, high - low


def all_pairs_comparisons(
    planted: dict[str, float], prompts: int, spread: float, repeats: int, rng: np.random.Generator
) -> list[Comparison]:
    """Every pair of ``planted``'s systems ``repeats`` times on each of ``prompts`` prompts,
    answer order drawn at random; each system's log-strength on a prompt (its answer, which the
    prompt's comparisons share) is its own plus N(0, spread^2)."""
    comparisons: list[Comparison] = []
    for p in range(prompts):
        noise = rng.normal(0.0, spread, len(planted)) if spread else np.zeros(len(planted))
        strengths = {s: v + float(u) for (s, v), u in zip(planted.items(), noise, strict=True)}
        pairs = [
            (f"p{p}", a, b) if rng.random() < 0.5 else (f"p{p}", b, a)
            for a, b in itertools.combinations(planted, 2)
            for _ in range(repeats)
        ]
        comparisons += simulate_davidson(strengths, NU, pairs, rng)
    return comparisons


def panel_comparisons(prompts: int, effect: bool, rng: np.random.Generator) -> list[Comparison]:
    """All pairs of STRENGTHS on each of ``prompts`` prompts, answer order drawn at random; with
    ``effect`` each system's log-strength on a prompt is its own plus N(0, PROMPT_SPREAD^2)."""
    return all_pairs_comparisons(STRENGTHS, prompts, PROMPT_SPREAD if effect else 0.0, 1, rng)


def averaged_win_rates(planted: dict[str, float], draws: np.ndarray) -> dict[tuple[str, str], float]:
    """Each pair's planted win rate (ties half) averaged over ``draws`` of the two systems'
    prompt effects (rows of two log-strength shifts)."""
    rates = {}
    for a, b in itertools.combinations(planted, 2):
        pa, pb = np.exp(planted[a] + draws[:, 0]), np.exp(planted[b] + draws[:, 1])
        tie = NU * np.sqrt(pa * pb)
        rates[(a, b)] = float(np.mean((pa + tie / 2) / (pa + pb + tie)))
    return rates


def panel_truth(effect: bool) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """What the panel-only leaderboard and win rates estimate: each system's rating as fitted on
    TRUTH_PROMPTS prompts (the anchor a at 1000), and each pair's win rate (ties half) averaged
    over 10^6 draws of the prompt effect."""
    rng = np.random.default_rng([17, int(effect)])
    board = leaderboard(panel_comparisons(TRUTH_PROMPTS, effect, rng), list(STRENGTHS), anchor="a")
    ratings = {row["system"]: row["rating"] for row in board["rows"]}
    draws = rng.normal(0.0, PROMPT_SPREAD if effect else 0.0, (1_000_000, 2))
    return ratings, averaged_win_rates(STRENGTHS, draws)


def panel_run(
    prompts: int,
    effect: bool,
    truth: tuple[dict[str, float], dict[tuple[str, str], float]],
    rng: np.random.Generator,
) -> tuple[list[tuple[bool, float]], list[tuple[bool, float]]]:
    """The non-anchor ratings' and the pairs' win-rate (coverage, width) cases of one run."""
    ratings, rates = truth
    comparisons = panel_comparisons(prompts, effect, rng)
    board = leaderboard(comparisons, list(STRENGTHS), anchor="a")
    rating_cases = [
        (row["ci95"][0] <= ratings[row["system"]] <= row["ci95"][1], row["ci95"][1] - row["ci95"][0])
        for row in board["rows"]
        if row["system"] != "a"
    ]
    rate_cases = []
    for pair in win_rates(comparisons, list(STRENGTHS))["pairs"]:
        a, b = pair["system_a"], pair["system_b"]
        planted = rates[(a, b)] if (a, b) in rates else 1 - rates[(b, a)]
        low, high = pair["win_rate"]["ci95"]
        rate_cases.append((low <= planted <= high, high - low))
    return rating_cases, rate_cases


# The field win rates' design: 8 systems 0.4 apart in log-strength (STRENGTHS' spacing, extended
# to 1.4 ... -1.4), with per-prompt effects of these standard deviations.
FIELD_STRENGTHS = {s: round(1.4 - 0.4 * i, 1) for i, s in enumerate("abcdefgh")}
FIELD_SPREADS = (0.0, 0.5, 1.0, 1.5)
Truth = tuple[dict[str, float], dict[tuple[str, str], float]]


def field_truth(spread: float) -> Truth:
    """What the 8 systems' win rates estimate: each system's mean planted win rate against the
    other 7, and each pair's, averaged over 10^6 draws of the prompt effect (seeded)."""
    draws = np.random.default_rng([19, int(10 * spread)]).normal(0.0, spread, (1_000_000, 2))
    pairs = averaged_win_rates(FIELD_STRENGTHS, draws)
    against = {(a, b): r for (a, b), r in pairs.items()} | {(b, a): 1 - r for (a, b), r in pairs.items()}
    field = {s: float(np.mean([against[(s, o)] for o in FIELD_STRENGTHS if o != s])) for s in FIELD_STRENGTHS}
    return field, pairs


def field_win_rate_run(
    prompts: int, spread: float, repeats: int, truth: Truth, rng: np.random.Generator
) -> tuple[list[tuple[bool, float]], list[tuple[bool, float]]]:
    """The 8 systems' win rates against the field and the 28 pairs' (coverage, width) cases of
    one run: every pair ``repeats`` times on each prompt (``all_pairs_comparisons``)."""
    field, pairs = truth
    comparisons = all_pairs_comparisons(FIELD_STRENGTHS, prompts, spread, repeats, rng)
    found = win_rates(comparisons, list(FIELD_STRENGTHS))

    def held(interval: ProportionInterval, planted: float) -> tuple[bool, float]:
        low, high = interval["ci95"]
        return low <= planted <= high, high - low

    # ``win_rates`` orients each pair as FIELD_STRENGTHS orders it, as ``pairs`` is keyed.
    return (
        [held(row["win_rate"], field[row["system"]]) for row in found["overall"]],
        [held(pair["win_rate"], pairs[(pair["system_a"], pair["system_b"])]) for pair in found["pairs"]],
    )


def judge_strengths(
    systems: int, noise: float, equal: bool, rng: np.random.Generator
) -> tuple[dict[str, float], dict[str, float]]:
    """Two judges' log-strengths of ``systems`` systems: A's evenly spaced over [-1, 1] (with
    ``equal``, the middle two made equal), B's A's plus N(0, noise^2) each."""
    values = [2 * (i / (systems - 1) - 0.5) for i in range(systems)]
    if equal:
        middle = systems // 2 - 1
        values[middle] = values[middle + 1] = (values[middle] + values[middle + 1]) / 2
    a = {f"s{i}": v for i, v in enumerate(values)}
    return a, {s: v + float(rng.normal(0.0, noise)) if noise else v for s, v in a.items()}


def boards_run(
    systems: int, prompts: int, noise: float, equal: bool, rng: np.random.Generator
) -> tuple[bool, float]:
    """Whether ``compare_boards``' tau bounds hold the two judges' planted tau (tau-a over the
    pairs: +1 ordered alike, -1 not, 0 a tie in either), and their width."""
    strengths_a, strengths_b = judge_strengths(systems, noise, equal, rng)
    names = list(strengths_a)
    pairs = [
        (f"p{p}", a, b) if rng.random() < 0.5 else (f"p{p}", b, a)
        for p in range(prompts)
        for a, b in itertools.combinations(names, 2)
    ]
    boards = [
        leaderboard(simulate_davidson(strengths, NU, pairs, rng), names, anchor=names[0])
        for strengths in (strengths_a, strengths_b)
    ]
    found = compare_boards(boards[0], boards[1])
    assert found is not None and "tau_bounds" in found
    low, high = found["tau_bounds"]
    truth = float(
        np.mean(
            [
                np.sign(strengths_a[x] - strengths_a[y]) * np.sign(strengths_b[x] - strengths_b[y])
                for x, y in itertools.combinations(names, 2)
            ]
        )
    )
    return low - 1e-12 <= truth <= high + 1e-12, high - low


# Direct scores: (each system's centre, the prompt effect's sd, the response's own sd), on 1-10.
DIRECT_SETTINGS = {
    "spread out": ((4.0, 6.0, 8.0), 1.0, 1.5),
    "near the top": ((9.5, 9.8, 8.0), 0.3, 0.7),
}


def direct_scores(
    centres: tuple[float, ...], prompt_sd: float, own_sd: float, prompts: int, rng: np.random.Generator
) -> np.ndarray:
    """Scores (prompts x systems): each centre plus the prompt's shared effect plus the
    response's own noise, rounded and held within 1-10 as a referee's score is."""
    latent = (
        np.array(centres)
        + rng.normal(0.0, prompt_sd, (prompts, 1))
        + rng.normal(0.0, own_sd, (prompts, len(centres)))
    )
    return np.clip(np.round(latent), 1, 10)


def direct_run(
    setting: str, prompts: int, truth: np.ndarray, rng: np.random.Generator
) -> tuple[list[tuple[bool, float]], list[tuple[bool, float]]]:
    """The per-system means' and the paired differences' (coverage, width) cases of one run."""
    centres, prompt_sd, own_sd = DIRECT_SETTINGS[setting]
    scores = direct_scores(centres, prompt_sd, own_sd, prompts, rng)
    names = [f"s{i}" for i in range(len(centres))]
    rows = [
        ScoredResponse(f"p{p}", name, {"overall": float(scores[p, i])})
        for p in range(prompts)
        for i, name in enumerate(names)
    ]
    found = direct_systems(rows, names, {"overall": (1, 10)})
    means = [
        (
            m["mean"]["ci95"][0] <= truth[names.index(m["system"])] <= m["mean"]["ci95"][1],
            m["mean"]["ci95"][1] - m["mean"]["ci95"][0],
        )
        for m in found["means"]
    ]
    differences = []
    for d in found["differences"]:
        assert d["difference"] is not None
        planted = truth[names.index(d["system_a"])] - truth[names.index(d["system_b"])]
        low, high = d["difference"]["ci95"]
        differences.append((low <= planted <= high, high - low))
    return means, differences


def panel_copy(human: list[Comparison], agreement: float, rng: np.random.Generator) -> list[float]:
    """The panel's outcome for each comparison: the human one with probability ``agreement``,
    else an independent draw from a panel that sees the systems as equal."""
    guesses = simulate_davidson(EQUAL, NU, [(c.prompt, c.system_a, c.system_b) for c in human], rng)
    keep = rng.random(len(human)) < agreement
    return [h.outcome if k else g.outcome for h, g, k in zip(human, guesses, keep, strict=True)]


def calibrated_pair_run(labels: int, agreement: float, rng: np.random.Generator) -> tuple[bool, float]:
    """Whether one pair's calibrated win rate interval holds the planted win rate, and its width."""
    human = simulate_davidson(STRENGTHS, NU, [(f"p{p}", "a", "b") for p in range(40)], rng)
    panel = panel_copy(human, agreement, rng)
    labelled = rng.permutation(40) < labels
    estimate = ppi_mean(
        [h.outcome for h, lab in zip(human, labelled, strict=True) if lab],
        [v for v, lab in zip(panel, labelled, strict=True) if lab],
        [v for v, lab in zip(panel, labelled, strict=True) if not lab],
        bounds=(0.0, 1.0),
    )
    low, high = estimate["ci"]
    return low <= planted_win_rate("a", "b") <= high, high - low


# A panel that abstains (every verdict failed: ``undecided``), more often where the humans tie:
# on 60% of those and 22.5% of the others, about 30% of the comparisons in all.
ABSTAINS = {"tie": 0.6, "decisive": 0.225}


def abstentions(human: list[Comparison], abstains: bool, rng: np.random.Generator) -> np.ndarray:
    """Which comparisons the panel leaves undecided (``ABSTAINS``); none, and no draw, without
    ``abstains``, so that the rows of a panel that always decides keep their numbers."""
    if not abstains:
        return np.zeros(len(human), dtype=bool)
    chance = np.array([ABSTAINS["tie" if h.outcome == 0.5 else "decisive"] for h in human])
    return np.asarray(rng.random(len(human)) < chance)


CalibratedRun = tuple[list[tuple[bool, float]] | None, bool]  # the cases (None: refused), slice flagged


def calibrated_board(
    human: list[Comparison], panel: list[float], labelled: np.ndarray, undecided: np.ndarray, anchor: str
) -> tuple[CalibratedLeaderboard | None, bool]:
    """The calibrated leaderboard of a simulated run (None: refused) and whether its labelled
    slice was flagged as not random (refused for it, or ``label_slice`` not random). An undecided
    comparison reaches it as a run writes it: a tie, marked undecided."""
    comparisons = [
        Comparison(h.prompt, h.system_a, h.system_b, 0.5 if skip else v, None, 0, 0)
        for h, v, skip in zip(human, panel, undecided, strict=True)
    ]
    outcomes = [h.outcome if lab else None for h, lab in zip(human, labelled, strict=True)]
    try:
        board = calibrated_leaderboard(
            comparisons, outcomes, anchor=anchor, soft=False, undecided=list(undecided)
        )
    except ValueError as exc:  # too few labels for some system, or a slice beyond chance
        return None, "not a random slice" in str(exc)
    return board, not board["label_slice"]["random"]


def field_run(fraction: float, agreement: float, abstains: bool, rng: np.random.Generator) -> CalibratedRun:
    """Each system's calibrated field win rate: whether its interval holds the truth, its width."""
    pairs = [(f"p{p}", a, b) for p in range(40) for a, b in PAIRS]
    human = simulate_davidson(STRENGTHS, NU, pairs, rng)
    panel = panel_copy(human, agreement, rng)
    labelled = rng.random(len(human)) < fraction
    board, flagged = calibrated_board(human, panel, labelled, abstentions(human, abstains, rng), "a")
    if board is None:
        return None, flagged
    out = []
    for row in board["rows"]:
        field = row["field"]
        if field is None:
            continue
        truth = float(np.mean([planted_win_rate(row["system"], o) for o in STRENGTHS if o != row["system"]]))
        low, high = field["ci"]
        out.append((low <= truth <= high, high - low))
    return out, flagged


ONE_FAR_BEHIND = {"a": 0.0, "b": -0.2, "c": -2.0}  # c loses most of its labelled comparisons


def planted_ratings(strengths: dict[str, float], pairs: list[tuple[str, str, str]]) -> dict[str, float]:
    """What the calibrated ratings estimate: the logistic Bradley-Terry fit (ties half) to each
    comparison's expected outcome under the planted Davidson model, on the design's pairs."""
    names = list(strengths)
    a = np.array([names.index(p[1]) for p in pairs])
    b = np.array([names.index(p[2]) for p in pairs])
    expected = []
    for _, first, second in pairs:
        pa, pb = math.exp(strengths[first]), math.exp(strengths[second])
        tie = NU * math.sqrt(pa * pb)
        expected.append((pa + tie / 2) / (pa + pb + tie))
    theta = classical_logistic(bradley_terry_design(a, b, len(names), 0), np.array(expected)).theta
    return dict(zip(names[1:], BASE_RATING + ELO_SCALE * theta, strict=True))


# A panel that favours the worst system: where it does not copy the human outcome, it judges
# as if d were the best (a judge partial to one system's style, say).
FAVOURS_D = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1.5}


def rating_run(
    strengths: dict[str, float],
    prompts: int,
    labels: int,
    agreement: float,
    rng: np.random.Generator,
    panel_sees: dict[str, float] | None = None,
    abstains: bool = False,
) -> CalibratedRun:
    """Each non-anchor system's calibrated rating: whether its interval holds the planted one,
    and its width (None when the leaderboard is refused), and whether the slice was flagged.
    Where the panel does not copy the human outcome it judges by ``panel_sees`` (default: every
    system equal); with ``abstains`` it leaves some comparisons undecided (``ABSTAINS``)."""
    names = list(strengths)
    pairs = [(f"p{p}", a, b) for p in range(prompts) for a, b in itertools.combinations(names, 2)]
    human = simulate_davidson(strengths, NU, pairs, rng)
    guesses = simulate_davidson(panel_sees or dict.fromkeys(names, 0.0), NU, pairs, rng)
    keep = rng.random(len(human)) < agreement
    panel = [h.outcome if k else g.outcome for h, g, k in zip(human, guesses, keep, strict=True)]
    labelled = np.zeros(len(human), dtype=bool)
    labelled[rng.choice(len(human), labels, replace=False)] = True
    board, flagged = calibrated_board(human, panel, labelled, abstentions(human, abstains, rng), names[0])
    if board is None:
        return None, flagged
    truth = planted_ratings(strengths, pairs)
    out = []
    for row in board["rows"]:
        if row["system"] != names[0]:
            low, high = row["ci95"]
            out.append((low <= truth[row["system"]] <= high, high - low))
    return out, flagged


BASELINE_LENGTH_SD = 60.0  # words: the spread of a system's answer length minus the baseline's
BASELINE_TIES = 0.3


def baseline_comparisons(
    prompts: int, theta: float, phi: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One comparison of a system with the baseline per prompt (``compare: {against: X}``):
    outcomes (ties half), length differences and prompt ids."""
    differences = np.round(rng.normal(0.0, BASELINE_LENGTH_SD, prompts))
    strength = theta + phi * np.tanh(differences / BASELINE_LENGTH_SD) + rng.normal(0.0, 0.5, prompts)
    win = 1 / (1 + np.exp(-strength))
    draw = rng.random(prompts)
    outcomes = np.where(draw < BASELINE_TIES, 0.5, np.where(rng.random(prompts) < win, 1.0, 0.0))
    return outcomes, differences, np.arange(prompts).astype(str)


def planted_lc_win_rate(theta: float, phi: float) -> float:
    """What the length-controlled win rate estimates: its value on 400,000 comparisons."""
    outcomes, differences, prompts = baseline_comparisons(400_000, theta, phi, np.random.default_rng(7))
    rate, _, _ = lc_win_rate(outcomes, differences, prompts, float(np.std(differences)))
    return rate["value"]


def baseline_run(
    prompts: int, theta: float, phi: float, truth: float, rng: np.random.Generator
) -> tuple[bool, float] | None:
    """Whether the length-controlled win rate's interval holds the truth, and its width; None
    where the rate is not estimable (withheld, as ``against_baseline`` withholds it)."""
    outcomes, differences, ids = baseline_comparisons(prompts, theta, phi, rng)
    rate, _, _ = lc_win_rate(outcomes, differences, ids, float(np.std(differences)))
    if lc_not_estimable(rate, differences, prompts):
        return None
    low, high = rate["ci95"]
    return low <= truth <= high, high - low


def summarise(
    label: str, setting: str, cases: list[tuple[bool, float]], rows: list[dict[str, object]]
) -> None:
    coverage = float(np.mean([c for c, _ in cases]))
    width = float(np.mean([w for _, w in cases]))
    row = {"statistic": label, "setting": setting, "cases": len(cases), "coverage": coverage, "width": width}
    rows.append(row)
    print(table_line(row), flush=True)


TABLE_HEADER = (
    "| statistic | setting | cases | coverage of 95% CI | mean width |\n| --- | --- | --- | --- | --- |"
)


def table_line(row: dict[str, object]) -> str:
    """A row as docs/performance.md's table shows it."""
    coverage, width = float(row["coverage"]), float(row["width"])  # type: ignore[arg-type]
    return f"| {row['statistic']} | {row['setting']} | {row['cases']} | {coverage:.1%} | {width:.3f} |"


Rows = list[dict[str, object]]


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


def correlation_rows(reps: int, rows: Rows) -> None:
    for panel, (human_noise, panel_noise, share, sizes) in CORRELATION_PANELS.items():
        noises = (human_noise, panel_noise)
        for per_unit in sizes:
            truth = planted_correlations(per_unit, noises, share)
            for units in (6, 10, 20, 40):
                # the first panel's seeds as before, so its rows rerun digit for digit
                rng = np.random.default_rng([units, per_unit] + ([len(panel)] if panel else []))
                found = [
                    correlation_run(units, per_unit, truth, seed, rng, noises, share) for seed in range(reps)
                ]
                kept = [case for case in found if case is not None]
                setting = f"{units} groups x {per_unit} responses" if per_unit > 1 else f"{units} items"
                for k, statistic in enumerate(("Spearman", "Kendall")):
                    summarise(statistic, setting + panel, [case[k] for case in kept], rows)


def paired_correlation_rows(reps: int, rows: Rows) -> None:
    for per_unit in (1, 6):
        truth = planted_correlation_differences(per_unit)
        for units in (6, 10, 20, 40):
            rng = np.random.default_rng([units, per_unit, 3])
            found = [paired_correlation_run(units, per_unit, truth, seed, rng) for seed in range(reps)]
            kept = [case for case in found if case is not None]
            setting = f"{units} groups x {per_unit} responses" if per_unit > 1 else f"{units} items"
            for k, statistic in enumerate(("paired Spearman difference", "paired Kendall difference")):
                summarise(statistic, setting, [case[k] for case in kept], rows)


def length_rows(reps: int, rows: Rows) -> None:
    for effect in (False, True):
        for prompts in (2, 4, 8, 30):
            rng = np.random.default_rng([prompts, int(effect)])
            cases = [
                c for c in (length_share_run(prompts, effect, rng) for _ in range(reps)) if c is not None
            ]
            setting = f"{prompts} prompts x 6 comparisons" + (", prompt effect" if effect else "")
            summarise("length share", setting, cases, rows)


def calibrated_pair_rows(reps: int, rows: Rows) -> None:
    for agreement in (0.8, 0.0):
        for labels in (3, 5, 10, 30):
            rng = np.random.default_rng([labels, int(10 * agreement)])
            cases = [calibrated_pair_run(labels, agreement, rng) for _ in range(reps)]
            summarise(
                "calibrated pair", f"{labels} of 40 labelled, panel agrees {agreement:.0%}", cases, rows
            )


def refused_and_flagged(runs: list[CalibratedRun]) -> str:
    """How many runs' leaderboards were refused and how many labelled slices (random, all of
    them) the slice test flagged as not random: its false alarms."""
    refused = sum(cases is None for cases, _ in runs)
    flagged = sum(flag for _, flag in runs)
    return f" ({refused} refused; {flagged} of {len(runs)} random slices flagged)"


def field_rows(reps: int, rows: Rows) -> None:
    for agreement, abstains in ((0.8, False), (0.0, False), (0.8, True)):
        for fraction in (0.1, 0.25):
            rng = np.random.default_rng(
                [int(100 * fraction), int(10 * agreement)] + ([2] if abstains else [])
            )
            # Runs until the row has ``reps`` cases (4 a run): a refused run adds none.
            runs: list[CalibratedRun] = []
            cases: list[tuple[bool, float]] = []
            while len(cases) < reps:
                runs.append(field_run(fraction, agreement, abstains, rng))
                cases += runs[-1][0] or []
            setting = f"{fraction:.0%} of 240 labelled, panel agrees {agreement:.0%}" + (
                ", abstains on ~30%" if abstains else ""
            )
            summarise("calibrated field win rate", setting + refused_and_flagged(runs), cases, rows)


def rating_rows(reps: int, rows: Rows) -> None:
    designs: list[tuple[dict[str, float], int, tuple[int, ...], str, dict[str, float] | None, bool]] = [
        (STRENGTHS, 40, (10, 40, 200), "4 systems x 40 prompts", None, False),
        (ONE_FAR_BEHIND, 20, (10, 20, 40), "3 systems x 20 prompts, one far behind", None, False),
        (STRENGTHS, 40, (10, 40, 200), "4 systems x 40 prompts, panel favours d", FAVOURS_D, False),
        (STRENGTHS, 40, (10, 40), "4 systems x 40 prompts, panel abstains on ~30%", None, True),
    ]
    for strengths, prompts, label_counts, described, panel_sees, abstains in designs:
        for agreement in (0.8, 0.0):
            for labels in label_counts:
                seed = [labels, int(10 * agreement), len(strengths)] + ([1] if panel_sees else [])
                rng = np.random.default_rng(seed + ([2] if abstains else []))
                runs = [
                    rating_run(strengths, prompts, labels, agreement, rng, panel_sees, abstains)
                    for _ in range(reps)
                ]
                cases = [c for found, _ in runs for c in found or []]
                setting = f"{described}, {labels} labelled, panel agrees {agreement:.0%}"
                summarise("calibrated rating", setting + refused_and_flagged(runs), cases, rows)


def panel_rows(reps: int, rows: Rows) -> None:
    for effect in (False, True):
        truth = panel_truth(effect)
        for prompts in (2, 3, 4, 5, 8, 20, 40):
            rng = np.random.default_rng([prompts, int(effect), 5])
            runs = [panel_run(prompts, effect, truth, rng) for _ in range(reps)]
            setting = f"4 systems x {prompts} prompts" + (", prompt effect" if effect else "")
            summarise("rating", setting, [c for run in runs for c in run[0]], rows)
            summarise("win rate", setting, [c for run in runs for c in run[1]], rows)


def field_win_rate_rows(reps: int, rows: Rows) -> None:
    # Every pair once on each prompt, and (below 5 prompts, where the prompt is the interval's
    # unit) 3 times on each prompt, the 3 sharing the prompt's answers.
    once = [(prompts, 1) for prompts in (2, 3, 4, 5, 8, 20, 40)]
    designs = once + [(prompts, 3) for prompts in (2, 3, 4, 5)]
    for spread in FIELD_SPREADS:
        truth = field_truth(spread)
        for prompts, repeats in designs:
            rng = np.random.default_rng([prompts, int(10 * spread), repeats, 64])
            runs = [field_win_rate_run(prompts, spread, repeats, truth, rng) for _ in range(reps)]
            setting = f"8 systems x {prompts} prompts" + (f" x {repeats} per pair" if repeats > 1 else "")
            setting += f", prompt effect sd {spread:g}"
            summarise("field win rate (8 systems)", setting, [c for run in runs for c in run[0]], rows)
            summarise("pair win rate (8 systems)", setting, [c for run in runs for c in run[1]], rows)


def board_rows(reps: int, rows: Rows) -> None:
    settings = [(4, 5), (4, 20), (4, 80), (8, 5), (8, 20), (8, 80)]
    for noise, equal in ((0.0, False), (0.5, False), (0.0, True)):
        for systems, prompts in settings:
            rng = np.random.default_rng([systems, prompts, int(10 * noise), int(equal)])
            cases = [boards_run(systems, prompts, noise, equal, rng) for _ in range(reps)]
            judges = "the same strengths" if noise == 0 else f"B = A + N(0, {noise:g}^2)"
            setting = f"{systems} systems x {prompts} prompts, {judges}" + (
                ", middle two equal" if equal else ""
            )
            summarise("tau bounds (compare)", setting, cases, rows)


def direct_rows(reps: int, rows: Rows) -> None:
    for setting, (centres, prompt_sd, own_sd) in DIRECT_SETTINGS.items():
        truth = direct_scores(centres, prompt_sd, own_sd, 1_000_000, np.random.default_rng(23)).mean(axis=0)
        for prompts in (2, 3, 5, 10, 20, 40):
            rng = np.random.default_rng([prompts, len(setting), 11])
            runs = [direct_run(setting, prompts, truth, rng) for _ in range(reps)]
            described = f"3 systems x {prompts} prompts, 1-10 scores {setting}"
            summarise("direct mean", described, [c for run in runs for c in run[0]], rows)
            summarise("direct paired difference", described, [c for run in runs for c in run[1]], rows)


def baseline_rows(reps: int, rows: Rows) -> None:
    """Coverage of the length-controlled rates shown; runs go on (up to 20 times ``reps``) until
    ``reps`` are shown, and the setting says how many were withheld as not estimable (under
    ``LC_MIN_PROMPTS`` prompts every one: no row, a line printed)."""
    for theta, phi in ((0.0, 0.0), (1.0, 1.0)):
        truth = planted_lc_win_rate(theta, phi)
        for prompts in (3, 4, 5, 8, 10, 20, 40):
            rng = np.random.default_rng([prompts, int(10 * theta), int(10 * phi)])
            cases: list[tuple[bool, float]] = []
            runs = 0
            enough = prompts >= against_baseline_module.LC_MIN_PROMPTS
            while len(cases) < reps and runs < (20 * reps if enough else reps):
                runs += 1
                if (case := baseline_run(prompts, theta, phi, truth, rng)) is not None:
                    cases.append(case)
            setting = f"{prompts} prompts against the baseline, logit {theta:g} + {phi:g} x length"
            setting += f" ({runs - len(cases)} of {runs} runs not estimable)"
            if cases:
                summarise("length-controlled win rate", setting, cases, rows)
            else:
                print(f"| length-controlled win rate | {setting} | 0 | - | - |", flush=True)


# family -> (its rows, the statistics it writes); every row of a family is seeded on its own,
# so one family rerun (``--only``) gives the rows a whole run would.
FAMILIES = {
    "agreement": (agreement_rows, ("accuracy", "kappa")),
    "paired": (paired_rows, ("paired accuracy difference", "paired kappa difference")),
    "paired-correlations": (
        paired_correlation_rows,
        ("paired Spearman difference", "paired Kendall difference"),
    ),
    "correlations": (correlation_rows, ("Spearman", "Kendall")),
    "length": (length_rows, ("length share",)),
    "calibrated-pair": (calibrated_pair_rows, ("calibrated pair",)),
    "calibrated-field": (field_rows, ("calibrated field win rate",)),
    "calibrated-rating": (rating_rows, ("calibrated rating",)),
    "baseline": (baseline_rows, ("length-controlled win rate",)),
    "panel": (panel_rows, ("rating", "win rate")),
    "field-win-rates": (field_win_rate_rows, ("field win rate (8 systems)", "pair win rate (8 systems)")),
    "boards": (board_rows, ("tau bounds (compare)",)),
    "direct": (direct_rows, ("direct mean", "direct paired difference")),
}


def _replace_rows(kept: Rows, fresh: Rows, replaced: set[str]) -> Rows:
    """``kept`` with its rows of the ``replaced`` statistics swapped for ``fresh``, placed where
    the first replaced row stood (at the end when none did): a family that gains or loses rows
    keeps its place and no stale row survives."""
    positions = [k for k, row in enumerate(kept) if row["statistic"] in replaced]
    at = positions[0] if positions else len(kept)
    others = [row for row in kept if row["statistic"] not in replaced]
    before = sum(1 for row in kept[:at] if row["statistic"] not in replaced)
    return others[:before] + fresh + others[before:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=400)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(FAMILIES),
        help="rerun these families only; with -o, their rows replace those in the file (the others kept)",
    )
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument(
        "--lc-min-prompts",
        type=int,
        help="the baseline family with another prompt count below which the length-controlled rate "
        "is withheld (0: the interval's width alone decides): shows why it is 8; not with -o",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="print the markdown table of the rows in -o (docs/performance.md's) and exit",
    )
    args = parser.parse_args()
    if args.lc_min_prompts is not None:
        if args.output is not None:
            parser.error("--lc-min-prompts shows a setting not kept: it does not write -o")
        against_baseline_module.LC_MIN_PROMPTS = args.lc_min_prompts
    reps = args.repetitions
    chosen = args.only or list(FAMILIES)
    rows: Rows = []
    if args.table:
        if args.output is None:
            parser.error("--table prints the rows of the file given with -o")
        print(TABLE_HEADER)
        print("\n".join(table_line(row) for row in json.loads(args.output.read_text())["rows"]))
        return 0
    print(TABLE_HEADER)
    start = time.perf_counter()
    for family in chosen:
        FAMILIES[family][0](reps, rows)
    seconds = time.perf_counter() - start
    print(
        f"\n{reps} repetitions per row (the field win rates: runs of 4 systems until {reps} cases); "
        f"{seconds:.0f} s",
        file=sys.stderr,
    )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        meta: dict[str, object] = {"nu": NU, "strengths": STRENGTHS, "repetitions": reps}
        if args.only and args.output.exists():  # keep the other families' rows, in their order
            kept = json.loads(args.output.read_text())
            replaced = {name for family in chosen for name in FAMILIES[family][1]}
            rows = _replace_rows(kept["rows"], rows, replaced)
            reruns = {**kept["settings"].get("rerun", {}), ", ".join(chosen): round(seconds, 1)}
            meta = {**kept["settings"], "rerun": reruns}
        else:
            meta["seconds"] = round(seconds, 1)
        args.output.write_text(json.dumps({"settings": meta, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
