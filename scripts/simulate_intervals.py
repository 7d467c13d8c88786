"""Do the 95% intervals of accuracy and kappa, the rank correlations, the panel's ratings and
win rates, the length share, the calibrated estimates, the direct scores' means and the
compared judges' tau bounds hold their 95%, few prompts and few labels included? (Designs of
many systems, adaptive ones included, are in simulate_designs.py.)

- **accuracy** and **kappa** (``pairwise_metrics``, as every run's agreement with human labels):
  n labelled items with human labels drawn from A 45%, B 40%, tie 15%; the panel's label is the
  human one with probability ``agreement``, else an independent draw from A 50%, B 40%, tie 10%
  (agreement 0: a panel that reads nothing). The truth is the population's accuracy and kappa.
  With ``two orders`` each item gives two rows (its two answer orders, as a model's rows are
  pooled): the second repeats the first label with probability 0.7, else is drawn anew, and the
  item is one cluster.
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
  noise cut into 1-3, the panel's 0.5 x plus noise cut into 1-5. The truth is each rank
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
  comparisons), a seeded random share of them labelled; the truth is each system's mean planted
  win rate against the other three.
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
  than 2 labelled comparisons).

- **rating** and **win rate** (``leaderboard`` and ``win_rates``, the panel alone): the four
  systems in all pairs on 2 to 40 prompts, answer order drawn at random; with ``prompt effect``
  each system's log-strength on a prompt is its own plus N(0, 0.7^2). The truth of a rating is
  the fit on 20,000 prompts of the same design; of a win rate, the planted one averaged over the
  prompt effect.
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

from chateval.evaluation.agreement.judges import compare_boards
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.agreement.paired import compare_direct, compare_pairwise
from chateval.evaluation.systems.against_baseline import lc_win_rate
from chateval.evaluation.systems.calibrated_leaderboard import calibrated_leaderboard
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.direct_systems import ScoredResponse, direct_systems
from chateval.evaluation.systems.leaderboard import leaderboard
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.evaluation.systems.ppi_bradley_terry import bradley_terry_design, classical_logistic
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


def planted_agreement(agreement: float) -> tuple[float, float]:
    """The population's accuracy and kappa of a panel that copies the human label with
    probability ``agreement`` and otherwise draws from ``PANEL_MIX``."""
    accuracy = agreement + (1 - agreement) * float(HUMAN_MIX @ PANEL_MIX)
    chance = float(HUMAN_MIX @ (agreement * HUMAN_MIX + (1 - agreement) * PANEL_MIX))
    return accuracy, (accuracy - chance) / (1 - chance)


def panel_labels(humans: np.ndarray, agreement: float, rng: np.random.Generator) -> np.ndarray:
    own = rng.choice(3, size=len(humans), p=PANEL_MIX)
    return np.where(rng.random(len(humans)) < agreement, humans, own)


def agreement_run(
    items: int, agreement: float, two_orders: bool, seed: int, rng: np.random.Generator
) -> list[tuple[bool, float]]:
    """Whether the accuracy's and the kappa's intervals hold the population's values, and
    their widths."""
    humans = rng.choice(3, size=items, p=HUMAN_MIX)
    labels = panel_labels(humans, agreement, rng)
    groups = None
    if two_orders:
        second = np.where(rng.random(items) < 0.7, labels, panel_labels(humans, agreement, rng))
        humans, labels = np.concatenate([humans, humans]), np.concatenate([labels, second])
        groups = [f"q{i}" for i in range(items)] * 2
    truth = [LABEL_NAMES[h] for h in humans]
    predicted = [LABEL_NAMES[x] for x in labels]
    metrics = pairwise_metrics(truth, predicted, seed, groups, "items")
    out = []
    for name, planted in zip(("accuracy", "kappa"), planted_agreement(agreement), strict=True):
        low, high = metrics[name]["ci95"]  # type: ignore[literal-required]
        out.append((low - 1e-12 <= planted <= high + 1e-12, high - low))
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


def scored_responses(
    units: int, per_unit: int, rng: np.random.Generator, noises: tuple[float, ...] = (0.8,)
) -> tuple[np.ndarray, list[np.ndarray], list[str]]:
    """Human scores (1-3), a panel's (1-5) per noise level in ``noises`` (drawn in that order,
    on the same responses) and each response's group, of ``units`` groups of ``per_unit``
    responses (the module doc)."""
    rows = units * per_unit
    quality = np.repeat(rng.normal(0.0, 0.8, units), per_unit) + rng.normal(0.0, 1.0, rows)
    human = np.digitize(quality + rng.normal(0.0, 0.5, rows), [-0.8, 0.8]) + 1.0
    cuts = [-1.2, -0.4, 0.4, 1.2]
    panels = [np.digitize(0.5 * quality + rng.normal(0.0, sd, rows), cuts) + 1.0 for sd in noises]
    return human, panels, [f"g{g}" for g in np.repeat(np.arange(units), per_unit)]


def planted_correlations(per_unit: int) -> tuple[float, float]:
    """Spearman and Kendall tau-b of the design over 240,000 responses."""
    from scipy.stats import kendalltau, spearmanr

    human, (panel,), _ = scored_responses(240_000 // per_unit, per_unit, np.random.default_rng(per_unit))
    return float(spearmanr(human, panel).statistic), float(kendalltau(human, panel).statistic)


def correlation_run(
    units: int, per_unit: int, truth: tuple[float, float], seed: int, rng: np.random.Generator
) -> list[tuple[bool, float]] | None:
    """Whether Spearman's and Kendall's intervals hold the truth, and their widths; None when
    either has no interval."""
    human, (panel,), groups = scored_responses(units, per_unit, rng)
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


def panel_comparisons(prompts: int, effect: bool, rng: np.random.Generator) -> list[Comparison]:
    """All pairs on each of ``prompts`` prompts, answer order drawn at random; with ``effect``
    each system's log-strength on a prompt is its own plus N(0, PROMPT_SPREAD^2)."""
    comparisons: list[Comparison] = []
    for p in range(prompts):
        noise = rng.normal(0.0, PROMPT_SPREAD, len(STRENGTHS)) if effect else np.zeros(len(STRENGTHS))
        strengths = {s: v + float(u) for (s, v), u in zip(STRENGTHS.items(), noise, strict=True)}
        pairs = [(f"p{p}", a, b) if rng.random() < 0.5 else (f"p{p}", b, a) for a, b in PAIRS]
        comparisons += simulate_davidson(strengths, NU, pairs, rng)
    return comparisons


def panel_truth(effect: bool) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """What the panel-only leaderboard and win rates estimate: each system's rating as fitted on
    TRUTH_PROMPTS prompts (the anchor a at 1000), and each pair's win rate (ties half) averaged
    over 10^6 draws of the prompt effect."""
    rng = np.random.default_rng([17, int(effect)])
    board = leaderboard(panel_comparisons(TRUTH_PROMPTS, effect, rng), list(STRENGTHS), anchor="a")
    ratings = {row["system"]: row["rating"] for row in board["rows"]}
    draws = rng.normal(0.0, PROMPT_SPREAD if effect else 0.0, (1_000_000, 2))
    rates = {}
    for a, b in PAIRS:
        pa, pb = np.exp(STRENGTHS[a] + draws[:, 0]), np.exp(STRENGTHS[b] + draws[:, 1])
        tie = NU * np.sqrt(pa * pb)
        rates[(a, b)] = float(np.mean((pa + tie / 2) / (pa + pb + tie)))
    return ratings, rates


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


def field_run(fraction: float, agreement: float, rng: np.random.Generator) -> list[tuple[bool, float]]:
    """Each system's calibrated field win rate: whether its interval holds the truth, its width."""
    pairs = [(f"p{p}", a, b) for p in range(40) for a, b in PAIRS]
    human = simulate_davidson(STRENGTHS, NU, pairs, rng)
    panel = panel_copy(human, agreement, rng)
    comparisons = [
        Comparison(h.prompt, h.system_a, h.system_b, v, None, 0, 0) for h, v in zip(human, panel, strict=True)
    ]
    labelled = rng.random(len(human)) < fraction
    outcomes = [h.outcome if lab else None for h, lab in zip(human, labelled, strict=True)]
    try:
        board = calibrated_leaderboard(comparisons, outcomes, anchor="a", soft=False)
    except ValueError:  # too few labels for some system: the board is refused
        return []
    out = []
    for row in board["rows"]:
        field = row["field"]
        if field is None:
            continue
        truth = float(np.mean([planted_win_rate(row["system"], o) for o in STRENGTHS if o != row["system"]]))
        low, high = field["ci"]
        out.append((low <= truth <= high, high - low))
    return out


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
) -> list[tuple[bool, float]] | None:
    """Each non-anchor system's calibrated rating: whether its interval holds the planted one,
    and its width; None when the leaderboard is refused. Where the panel does not copy the
    human outcome it judges by ``panel_sees`` (default: every system equal)."""
    names = list(strengths)
    pairs = [(f"p{p}", a, b) for p in range(prompts) for a, b in itertools.combinations(names, 2)]
    human = simulate_davidson(strengths, NU, pairs, rng)
    guesses = simulate_davidson(panel_sees or dict.fromkeys(names, 0.0), NU, pairs, rng)
    keep = rng.random(len(human)) < agreement
    panel = [h.outcome if k else g.outcome for h, g, k in zip(human, guesses, keep, strict=True)]
    comparisons = [
        Comparison(h.prompt, h.system_a, h.system_b, v, None, 0, 0) for h, v in zip(human, panel, strict=True)
    ]
    labelled = np.zeros(len(human), dtype=bool)
    labelled[rng.choice(len(human), labels, replace=False)] = True
    outcomes = [h.outcome if lab else None for h, lab in zip(human, labelled, strict=True)]
    try:
        board = calibrated_leaderboard(comparisons, outcomes, anchor=names[0], soft=False)
    except ValueError:
        return None
    truth = planted_ratings(strengths, pairs)
    out = []
    for row in board["rows"]:
        if row["system"] != names[0]:
            low, high = row["ci95"]
            out.append((low <= truth[row["system"]] <= high, high - low))
    return out


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
) -> tuple[bool, float]:
    """Whether the length-controlled win rate's interval holds the truth, and its width."""
    outcomes, differences, ids = baseline_comparisons(prompts, theta, phi, rng)
    rate, _, _ = lc_win_rate(outcomes, differences, ids, float(np.std(differences)))
    low, high = rate["ci95"]
    return low <= truth <= high, high - low


def summarise(
    label: str, setting: str, cases: list[tuple[bool, float]], rows: list[dict[str, object]]
) -> None:
    coverage = float(np.mean([c for c, _ in cases]))
    width = float(np.mean([w for _, w in cases]))
    rows.append(
        {"statistic": label, "setting": setting, "cases": len(cases), "coverage": coverage, "width": width}
    )
    print(f"| {label} | {setting} | {len(cases)} | {coverage:.1%} | {width:.3f} |", flush=True)


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


def correlation_rows(reps: int, rows: Rows) -> None:
    for per_unit in (1, 6):
        truth = planted_correlations(per_unit)
        for units in (6, 10, 20, 40):
            rng = np.random.default_rng([units, per_unit])
            found = [correlation_run(units, per_unit, truth, seed, rng) for seed in range(reps)]
            kept = [case for case in found if case is not None]
            setting = f"{units} groups x {per_unit} responses" if per_unit > 1 else f"{units} items"
            for k, statistic in enumerate(("Spearman", "Kendall")):
                summarise(statistic, setting, [case[k] for case in kept], rows)


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


def field_rows(reps: int, rows: Rows) -> None:
    for agreement in (0.8, 0.0):
        for fraction in (0.1, 0.25):
            rng = np.random.default_rng([int(100 * fraction), int(10 * agreement)])
            cases = [case for _ in range(reps // 4) for case in field_run(fraction, agreement, rng)]
            setting = f"{fraction:.0%} of 240 labelled, panel agrees {agreement:.0%}"
            summarise("calibrated field win rate", setting, cases, rows)


def rating_rows(reps: int, rows: Rows) -> None:
    designs: list[tuple[dict[str, float], int, tuple[int, ...], str, dict[str, float] | None]] = [
        (STRENGTHS, 40, (10, 40, 200), "4 systems x 40 prompts", None),
        (ONE_FAR_BEHIND, 20, (10, 20, 40), "3 systems x 20 prompts, one far behind", None),
        (STRENGTHS, 40, (10, 40, 200), "4 systems x 40 prompts, panel favours d", FAVOURS_D),
    ]
    for strengths, prompts, label_counts, described, panel_sees in designs:
        for agreement in (0.8, 0.0):
            for labels in label_counts:
                seed = [labels, int(10 * agreement), len(strengths)] + ([1] if panel_sees else [])
                rng = np.random.default_rng(seed)
                found = [
                    rating_run(strengths, prompts, labels, agreement, rng, panel_sees) for _ in range(reps)
                ]
                refused = sum(case is None for case in found)
                cases = [c for case in found if case is not None for c in case]
                setting = f"{described}, {labels} labelled, panel agrees {agreement:.0%}"
                summarise(
                    "calibrated rating", setting + (f" ({refused} refused)" if refused else ""), cases, rows
                )


def panel_rows(reps: int, rows: Rows) -> None:
    for effect in (False, True):
        truth = panel_truth(effect)
        for prompts in (2, 3, 4, 5, 8, 20, 40):
            rng = np.random.default_rng([prompts, int(effect), 5])
            runs = [panel_run(prompts, effect, truth, rng) for _ in range(reps)]
            setting = f"4 systems x {prompts} prompts" + (", prompt effect" if effect else "")
            summarise("rating", setting, [c for run in runs for c in run[0]], rows)
            summarise("win rate", setting, [c for run in runs for c in run[1]], rows)


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
    for theta, phi in ((0.0, 0.0), (1.0, 1.0)):
        truth = planted_lc_win_rate(theta, phi)
        for prompts in (3, 4, 5, 10, 20, 40):
            rng = np.random.default_rng([prompts, int(10 * theta), int(10 * phi)])
            cases = [baseline_run(prompts, theta, phi, truth, rng) for _ in range(reps)]
            setting = f"{prompts} prompts against the baseline, logit {theta:g} + {phi:g} x length"
            summarise("length-controlled win rate", setting, cases, rows)


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
    "boards": (board_rows, ("tau bounds (compare)",)),
    "direct": (direct_rows, ("direct mean", "direct paired difference")),
}


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
    args = parser.parse_args()
    reps = args.repetitions
    chosen = args.only or list(FAMILIES)
    rows: Rows = []
    print("| statistic | setting | cases | coverage of 95% CI | mean width |")
    print("| --- | --- | --- | --- | --- |")
    start = time.perf_counter()
    for family in chosen:
        FAMILIES[family][0](reps, rows)
    seconds = time.perf_counter() - start
    print(
        f"\n{reps} repetitions per row ({reps // 4} for the field win rates, 4 systems each); "
        f"{seconds:.0f} s",
        file=sys.stderr,
    )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        meta: dict[str, object] = {"nu": NU, "strengths": STRENGTHS, "repetitions": reps}
        if args.only and args.output.exists():  # keep the other families' rows, in their order
            kept = json.loads(args.output.read_text())
            replaced = {name for family in chosen for name in FAMILIES[family][1]}
            fresh = iter(rows)
            rows = [next(fresh) if row["statistic"] in replaced else row for row in kept["rows"]]
            rows += list(fresh)
            reruns = {**kept["settings"].get("rerun", {}), ", ".join(chosen): round(seconds, 1)}
            meta = {**kept["settings"], "rerun": reruns}
        else:
            meta["seconds"] = round(seconds, 1)
        args.output.write_text(json.dumps({"settings": meta, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
