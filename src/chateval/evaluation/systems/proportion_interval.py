"""Intervals for a proportion of outcomes in [0, 1] clustered by prompt: the win rates (a win 1,
a tie 0.5, a loss 0, or the panel's soft probability) and the length bias' share.

The method is an effective-sample-size Wilson interval with a degrees-of-freedom-adjusted
quantile (Wilson 1927, "Probable inference, the law of succession, and statistical inference";
Korn & Graubard 1998, "Confidence intervals for proportions with small expected number of
positive counts estimated from survey data"). With per-prompt sums s_g of N outcomes over
n_g comparisons on G prompts:

- the estimate is p = S / N (S the sum of all outcomes);
- the Bernoulli bound: an outcome in [0, 1] with mean p has variance at most p (1 - p), which a
  win rate with ties reaches when there are none, so V_iid = p (1 - p) / N bounds the variance of
  p for independent comparisons;
- the cluster-robust (prompt = cluster) variance of the ratio,
  V_cr = G / (G - 1) * sum_g (s_g - p n_g)^2 / N^2, measures how much the comparisons of one
  prompt move together (they share its difficulty and its answers);
- the design effect deff = max(1, V_cr / V_iid) shrinks the count to n_eff = N / deff; when p
  is 0 or 1 both variances are 0 and nothing measures how a prompt's comparisons move together,
  so the count is the worst case's, N^2 / sum_g n_g^2 (G when every prompt has as many
  comparisons; N with one comparison a prompt; below);
- the quantile is Student t with G - 1 degrees of freedom, since V_cr is estimated from G
  clusters;
- the interval is Wilson's score interval with n_eff and that quantile q, centre
  (p + q^2 / (2 n)) / (1 + q^2 / n), half-width q / (1 + q^2 / n) sqrt(p (1 - p) / n + q^2 / (4 n^2)).

Unlike a bootstrap or a normal interval, Wilson's is never zero-width for N >= 1 (1 win and 11
ties on 12 prompts give about [0.262, 0.797]) and stays within [0, 1].

With fewer than ``MIN_PROMPTS_CLUSTERED`` prompts a cluster variance from 2 to 4 prompts says
little about how much a prompt's comparisons move together (from 2 prompts, nothing): the
interval instead takes the prompt as the unit and allows for the worst case, every comparison
of a prompt agreeing. With per-prompt mean outcomes m_g in [0, 1] of common mean mu, p =
sum_g n_g m_g / N has variance sum_g n_g^2 Var(m_g) / N^2 <= mu (1 - mu) sum_g n_g^2 / N^2 (the
Bernoulli bound on m_g): that of a proportion of n_eff = N^2 / sum_g n_g^2 independent trials,
G prompts when every prompt has as many comparisons, whatever the comparisons share. The
interval is the exact Clopper-Pearson one of p n_eff successes in n_eff trials
(chateval.evaluation.binomial; exact when a prompt's comparisons all agree and are wins or
losses, conservative otherwise) and records ``"method": "clopper-pearson-prompts"`` with
``effective_n`` n_eff. It contains the exact interval of the N comparisons taken as
independent (checked over N up to 80), so it is that one, the interval of earlier releases
(``"clopper-pearson-independent"``), widened where a prompt has several comparisons; with one
comparison a prompt (a pair judged once on each prompt) the two are the same. An estimated
design effect read with t on G - 1 degrees of freedom would be narrower from 3 prompts on, but
not valid: 21 wins of 21 on 3 prompts measure no cluster variance (deff 1) and give [0.531, 1],
and where every prompt's comparisons agree, all 3 prompts go one way one time in 4 at a true
0.5.

scripts/simulate_intervals.py measures it (family ``field-win-rates``, 2,000 runs a row,
docs/performance.md): 8 systems in all pairs on 2 to 40 prompts, once or (2 to 5 prompts) 3
times a prompt sharing its answers, each system's log-strength on a prompt its own plus
N(0, sd^2), sd 0, 0.5, 1 or 1.5. Below 5 prompts, the comparisons taken as independent covered
a system's win rate against the field (its 7 comparisons of a prompt share its answer) 90.5% to
91.6% with sd 1.5, 69.7% to 70.6% with each pair judged 3 times a prompt, and such a pair
93.7% at 4 prompts; with the prompt as the unit every row below 5 prompts covers 99.5% to 100%.
The price is width: with each pair once a prompt, a system against the field is 0.95 wide at 2
prompts and 0.83 at 4 (0.50 and 0.36 before), where 5 prompts, with the estimated design
effect, give 0.41 to 0.49; a pair judged once a prompt is unchanged (0.91 at 2 prompts, 0.77 at
4). From 5 prompts on every row covers 95.2% to 99.9%. The length share (family ``length``, 6
comparisons a prompt) covers 100% at 2 and 4 prompts (0.96 and 0.86 wide, 0.61 and 0.45
before) and 95.5% to 98.4% from 8 on.
Where every comparison of a prompt agrees (6 a prompt, all won or all lost, true rate 0.5 or
0.7; tests/evaluation/test_proportion_interval.py) the interval holds at least 95% from 2 to 8
prompts; with a design effect of 1 where all were won it held 83% at 5 prompts.

Soft win rates (``mean_intervals``) are means of probabilities, not of wins and losses: their
spread is measured, not bounded (the Bernoulli bound would give a soft rate of 0.52 over 12
comparisons an interval of [0.25, 0.79]). From ``MIN_PROMPTS_CLUSTERED`` prompts on, the
variance is the larger of the independent one (the sample variance over N) and the
prompt-clustered V_cr, read with t on G - 1 degrees of freedom: a Wald interval clipped to
[0, 1]. With fewer prompts a measured spread is not to be trusted (two soft values of 0.49 would
give +-0.01), and when the values do not vary at all there is none: then the soft rate gets the
interval a hard win rate gets (Wilson's, or the exact one over prompts below 5 prompts).
"""

import numpy as np
from scipy.stats import t

from chateval.evaluation.binomial import CONFIDENCE, clopper_pearson_bounds
from chateval.schema.systems import ProportionInterval

MIN_PROMPTS_CLUSTERED = 5  # fewer prompts: no estimated design effect, the prompt is the unit


def per_prompt(
    prompt: np.ndarray, column: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    """Sum ``values`` into a (prompts x columns) matrix at (prompt, column): the per-prompt sums
    that ``proportion_intervals`` takes."""
    out = np.zeros(shape)
    np.add.at(out, (prompt, column), values)
    return out


def wilson(p: np.ndarray, n: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of proportions ``p`` from ``n`` (effective) observations at
    quantiles ``q``, elementwise: lower and upper bounds, within [0, 1]."""
    ratio = q**2 / n
    centre = (p + ratio / 2) / (1 + ratio)
    half = q / (1 + ratio) * np.sqrt(p * (1 - p) / n + ratio / (4 * n))
    # Wilson's bounds hold p and lie in [0, 1] exactly; these only remove rounding (p = 1 gave
    # an upper bound of 1 - 1e-16).
    return np.clip(np.minimum(centre - half, p), 0.0, 1.0), np.clip(np.maximum(centre + half, p), 0.0, 1.0)


def _clustered_ratio(
    sums: np.ndarray, totals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column of per-prompt sums and counts: the count N, the ratio p, the prompts G (at
    least 2, so that G - 1 never divides by 0), whether G reaches ``MIN_PROMPTS_CLUSTERED``, and
    the prompt-clustered variance V_cr of p (only clustered columns use it)."""
    n = totals.sum(axis=0)
    if np.any(n <= 0):
        raise ValueError("every column needs at least one observation")
    p = sums.sum(axis=0) / n
    prompts = (totals > 0).sum(axis=0)
    g = np.maximum(prompts, 2)
    v_cr = g / (g - 1) * ((sums - p * totals) ** 2).sum(axis=0) / n**2
    return n, p, g, prompts >= MIN_PROMPTS_CLUSTERED, v_cr


def proportion_intervals(sums: np.ndarray, totals: np.ndarray) -> list[ProportionInterval]:
    """The proportion ``sum(sums) / sum(totals)`` of each column with its 95% interval (the
    module doc's method), from per-prompt sums of outcomes in [0, 1] and per-prompt counts
    (prompts x columns; a 1-D pair is one column). Prompts with a count of 0 take no part;
    every column needs at least one observation."""
    sums, totals = np.asarray(sums, dtype=float), np.asarray(totals, dtype=float)
    if sums.ndim == 1:
        sums, totals = sums[:, None], totals[:, None]
    n, p, g, clustered, v_cr = _clustered_ratio(sums, totals)
    v_iid = p * (1 - p) / n
    # N^2 / sum n_g^2 trials: the count left when every comparison of a prompt agrees (the
    # largest design effect). Below MIN_PROMPTS_CLUSTERED prompts the prompt is the unit; so it
    # is when p is 0 or 1, where nothing varies to measure how a prompt's comparisons move
    # together (both variances are 0).
    units = n**2 / (totals**2).sum(axis=0)
    measured = clustered & (v_iid > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        effective = np.where(measured, n / np.maximum(1.0, v_cr / v_iid), units)
    # Every column at once: Wilson's for the clustered ones, the exact interval for the others.
    low, high = wilson(p, effective, t.ppf(1 - (1 - CONFIDENCE) / 2, g - 1))
    exact_low, exact_high = clopper_pearson_bounds(p * units, units)
    low, high = (
        np.where(clustered, low, np.minimum(exact_low, p)),
        np.where(clustered, high, np.maximum(exact_high, p)),
    )
    return [
        {
            "value": float(p[k]),
            "ci95": [float(low[k]), float(high[k])],
            "method": "wilson-cluster" if clustered[k] else "clopper-pearson-prompts",
            "effective_n": float(effective[k]),
        }
        for k in range(len(p))
    ]


def mean_intervals(sums: np.ndarray, squares: np.ndarray, totals: np.ndarray) -> list[ProportionInterval]:
    """The mean ``sum(sums) / sum(totals)`` of each column of values in [0, 1] with its 95%
    interval from their measured spread (the module doc's soft win rates), given per-prompt
    sums, sums of squares and counts (prompts x columns)."""
    n, p, g, clustered, v_cr = _clustered_ratio(sums, totals)
    spread = np.maximum(squares.sum(axis=0) - n * p**2, 0.0)  # sum of (x - p)^2
    v_iid = spread / np.maximum(n - 1, 1) / n
    variance = np.maximum(v_iid, v_cr)
    q = t.ppf(1 - (1 - CONFIDENCE) / 2, g - 1)
    half = q * np.sqrt(variance)
    bounded = proportion_intervals(sums, totals)
    out: list[ProportionInterval] = []
    for k in range(len(p)):
        # Too few prompts to trust a measured spread (two soft values of 0.49 would give
        # +-0.01), or none at all: the Bernoulli bound's interval, as for hard win rates.
        if not clustered[k] or variance[k] <= 0:
            out.append(bounded[k])
            continue
        out.append(
            {
                "value": float(p[k]),
                "ci95": [float(max(0.0, p[k] - half[k])), float(min(1.0, p[k] + half[k]))],
                "method": "t-cluster",
                "effective_n": float(p[k] * (1 - p[k]) / variance[k])
                if p[k] * (1 - p[k]) > 0
                else float(n[k]),
            }
        )
    return out
