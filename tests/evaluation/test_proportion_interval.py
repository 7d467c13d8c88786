"""Wilson intervals with a prompt-clustered design effect: hand-computed cases (the formulas
written out here, not called), no zero-width interval, and a seeded coverage simulation."""

import math

import numpy as np
import pytest
from scipy.stats import beta, t

from chateval.evaluation.systems.proportion_interval import (
    MIN_PROMPTS_CLUSTERED,
    mean_intervals,
    proportion_intervals,
)

Z = 1.959963984540054  # the normal 0.975 quantile


def wilson_by_hand(p: float, n: float, q: float) -> list[float]:
    """Wilson's score interval: centre (p + q^2 / 2n) / (1 + q^2 / n), half-width
    q / (1 + q^2 / n) * sqrt(p (1 - p) / n + q^2 / 4n^2)."""
    centre = (p + q**2 / (2 * n)) / (1 + q**2 / n)
    half = q / (1 + q**2 / n) * math.sqrt(p * (1 - p) / n + q**2 / (4 * n**2))
    return [centre - half, centre + half]


def test_three_ties_on_three_prompts() -> None:
    # Fewer than 5 prompts: the prompt is the unit, here one comparison each, so the exact
    # (Clopper-Pearson) interval of 1.5 successes in 3: beta quantiles B(0.025; 1.5, 2.5) and
    # B(0.975; 2.5, 1.5).
    (out,) = proportion_intervals(np.full(3, 0.5), np.ones(3))
    assert out["value"] == 0.5
    assert out["ci95"] == pytest.approx([beta.ppf(0.025, 1.5, 2.5), beta.ppf(0.975, 2.5, 1.5)])
    assert out["ci95"] == pytest.approx([0.039, 0.961], abs=1e-3)
    assert out["method"] == "clopper-pearson-prompts"
    assert out["effective_n"] == pytest.approx(3.0)


def test_comparisons_sharing_a_prompt_count_as_one_below_five_prompts() -> None:
    # 3 prompts of 7 comparisons (a system against 7 opponents, its answer shared): all 7 won on
    # two prompts, all lost on the third. p = 14 / 21 = 2/3; the 3 prompts are the units: the
    # exact interval of 2 in 3, B(0.025; 2, 2) and B(0.975; 3, 1) = 0.975^(1/3).
    (out,) = proportion_intervals(np.array([7.0, 7.0, 0.0]), np.full(3, 7.0))
    assert out["value"] == pytest.approx(2 / 3)
    assert out["ci95"] == pytest.approx([beta.ppf(0.025, 2, 2), 0.975 ** (1 / 3)])
    assert out["method"] == "clopper-pearson-prompts" and out["effective_n"] == pytest.approx(3.0)
    # Wider than 14 of the 21 comparisons taken as independent (the interval of releases 5-6);
    # the same as one comparison a prompt with those outcomes: the prompt is what counts.
    independent = [beta.ppf(0.025, 14, 8), beta.ppf(0.975, 15, 7)]
    assert out["ci95"][0] < independent[0] - 0.2 and out["ci95"][1] > independent[1] + 0.05
    (one_each,) = proportion_intervals(np.array([1.0, 1.0, 0.0]), np.ones(3))
    assert one_each["ci95"] == pytest.approx(out["ci95"])


def test_unequal_prompts_count_as_n_squared_over_the_sum_of_squares() -> None:
    # Counts 1, 2 and 5 (N = 8): a prompt weighs n_g / N, so the worst case (every comparison
    # of a prompt agreeing) leaves 64 / 30 trials; 5 of the 8 won, p = 5/8.
    sums, counts = np.array([1.0, 0.0, 4.0]), np.array([1.0, 2.0, 5.0])
    units = 64 / 30
    (out,) = proportion_intervals(sums, counts)
    assert out["effective_n"] == pytest.approx(units)
    x = 5 / 8 * units
    assert out["ci95"] == pytest.approx(
        [beta.ppf(0.025, x, units - x + 1), beta.ppf(0.975, x + 1, units - x)]
    )


@pytest.mark.parametrize("per", [1, 2, 7])
@pytest.mark.parametrize("prompts", [1, 2, 3, 4])
def test_the_prompt_unit_interval_holds_the_independent_one(prompts: int, per: int) -> None:
    # Whatever the outcomes, never narrower than the exact interval of the N comparisons taken
    # as independent: the same p from fewer trials.
    n = prompts * per
    for successes in np.arange(0, 2 * n + 1) / 2:
        sums = np.full(prompts, successes / prompts)
        (out,) = proportion_intervals(sums, np.full(prompts, float(per)))
        x = successes
        low = 0.0 if x == 0 else beta.ppf(0.025, x, n - x + 1)
        high = 1.0 if x == n else beta.ppf(0.975, x + 1, n - x)
        assert out["ci95"][0] <= low + 1e-12 and out["ci95"][1] >= high - 1e-12


@pytest.mark.parametrize("truth", [0.5, 0.7])
@pytest.mark.parametrize("prompts", [2, 3, 4, 5, 6, 8])
def test_prompts_whose_comparisons_all_agree_are_covered(prompts: int, truth: float) -> None:
    # The worst case: each prompt's 6 comparisons are all won or all lost (a prompt effect that
    # decides everything). Taken as independent, 18 wins of 18 (3 prompts) gave [0.815, 1] and
    # missed 0.5 whenever every prompt went one way (2 in 2^prompts); from 5 prompts, a design
    # effect of 1 where all were won gave 30 of 30 [0.82, 1] (5 prompts: 83% coverage of 0.7).
    # Prompt units hold them.
    rng = np.random.default_rng(prompts)
    won = (rng.random((prompts, 4000)) < truth).astype(float)  # 4,000 runs, one a column
    found = proportion_intervals(6 * won, np.full(won.shape, 6.0))
    held = [out["ci95"][0] <= truth <= out["ci95"][1] for out in found]
    assert np.mean(held) >= 0.95


def test_all_won_on_five_prompts_counts_the_prompts() -> None:
    # 30 wins of 30 on 5 prompts: no spread to measure a design effect, so the 5 prompts are
    # the count (Wilson's at n 5 with t(4)), as 5 wins of 5 single comparisons would be.
    (out,) = proportion_intervals(np.full(5, 6.0), np.full(5, 6.0))
    assert out["method"] == "wilson-cluster" and out["effective_n"] == pytest.approx(5.0)
    assert out["ci95"] == pytest.approx(wilson_by_hand(1.0, 5, float(t.ppf(0.975, 4))))
    assert out["ci95"][0] == pytest.approx(0.393, abs=1e-3)
    assert proportion_intervals(np.ones(5), np.ones(5))[0] == out


def test_one_win_and_eleven_ties_on_twelve_prompts() -> None:
    # p = 6.5 / 12. V_iid = p (1 - p) / 12; V_cr = 12/11 * ((1 - p)^2 + 11 (1/2 - p)^2) / 144 is
    # smaller (ties vary less than wins and losses): deff 1, quantile t(11).
    p = 6.5 / 12
    v_iid = p * (1 - p) / 12
    v_cr = 12 / 11 * ((1 - p) ** 2 + 11 * (0.5 - p) ** 2) / 144
    assert v_cr < v_iid
    (out,) = proportion_intervals(np.array([1.0] + [0.5] * 11), np.ones(12))
    assert out["ci95"] == pytest.approx(wilson_by_hand(p, 12, float(t.ppf(0.975, 11))))
    assert out["ci95"] == pytest.approx([0.262, 0.797], abs=1e-3)
    assert (out["method"], out["effective_n"]) == ("wilson-cluster", 12.0)


def test_two_decisive_verdicts_both_won() -> None:
    # Exact: 2 of 2 is [0.025^(1/2), 1] (Wilson's [0.342, 1] covered under 95% at such n).
    (out,) = proportion_intervals(np.ones(2), np.ones(2))
    assert out["ci95"] == pytest.approx([0.025**0.5, 1.0])
    assert out["ci95"] == pytest.approx([0.158, 1.0], abs=1e-3)


def test_prompts_whose_comparisons_agree_get_a_design_effect_and_t() -> None:
    # 5 prompts of 2 comparisons each, both won on 3 prompts and both lost on 2: N = 10, p = 0.6.
    # V_iid = 0.24 / 10; V_cr = 5/4 * (3 (2 - 1.2)^2 + 2 (0 - 1.2)^2) / 100 = 0.06: deff 2.5,
    # so the 10 comparisons count as 4; the quantile is t(4).
    sums, counts = np.array([2.0, 2.0, 0.0, 0.0, 2.0]), np.full(5, 2.0)
    v_iid = 0.6 * 0.4 / 10
    v_cr = 5 / 4 * (3 * 0.8**2 + 2 * 1.2**2) / 100
    assert v_cr / v_iid == pytest.approx(2.5)
    (out,) = proportion_intervals(sums, counts)
    assert out["effective_n"] == pytest.approx(4.0)
    assert out["ci95"] == pytest.approx(wilson_by_hand(0.6, 4, float(t.ppf(0.975, 4))))
    # Wider than the same 10 outcomes as independent comparisons.
    (alone,) = proportion_intervals(np.array([1.0] * 6 + [0.0] * 4), np.ones(10))
    assert out["ci95"][0] < alone["ci95"][0] and out["ci95"][1] > alone["ci95"][1]


def test_columns_are_independent_and_empty_prompts_take_no_part() -> None:
    sums = np.array([[1.0, 0.5], [0.0, 0.0], [1.0, 0.5]])
    counts = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    first, second = proportion_intervals(sums, counts)
    assert first == proportion_intervals(sums[:, 0], counts[:, 0])[0]
    # The second column's empty prompt counts for nothing: two ties on two prompts.
    assert second == proportion_intervals(np.array([0.5, 0.5]), np.ones(2))[0]
    with pytest.raises(ValueError, match="at least one observation"):
        proportion_intervals(np.zeros((3, 1)), np.zeros((3, 1)))


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("prompts", [1, 2, MIN_PROMPTS_CLUSTERED, 8])
def test_no_zero_width_and_within_bounds(p: float, prompts: int) -> None:
    (out,) = proportion_intervals(np.full(prompts, 3 * p), np.full(prompts, 3.0))
    low, high = out["ci95"]
    assert 0.0 <= low <= p <= high <= 1.0 and high - low > 0.1


def _coverage(rng: np.random.Generator, decisive: float, prompt_sd: float, truth: float) -> float:
    """Share of 400 intervals holding ``truth`` over seeded runs of 4 to 8 prompts with 1 to 6
    comparisons each: 20% ties, the rest won with a probability that varies between prompts
    (``prompt_sd`` on the log-odds around those of ``decisive``)."""
    repetitions, held = 400, 0
    for _ in range(repetitions):
        prompts, per = int(rng.integers(4, 9)), int(rng.integers(1, 7))
        log_odds = math.log(decisive / (1 - decisive)) + rng.normal(0, prompt_sd, prompts)
        win = 1 / (1 + np.exp(-log_odds))
        tie = rng.random((prompts, per)) < 0.2
        outcome = np.where(tie, 0.5, rng.random((prompts, per)) < win[:, None])
        (out,) = proportion_intervals(outcome.sum(axis=1), np.full(prompts, float(per)))
        held += out["ci95"][0] <= truth <= out["ci95"][1]
    return held / repetitions


@pytest.mark.parametrize("truth", [0.5, 0.75, 0.85])
def test_coverage_with_few_prompts(truth: float) -> None:
    # Trinomial draws (win, tie, loss) on 4 to 8 prompts: a nominal 95% covers at least 93%.
    decisive = (truth - 0.1) / 0.8  # ties are 20% and count half
    assert _coverage(np.random.default_rng(7), decisive, 0.0, truth) >= 0.93


def test_coverage_with_prompt_effects() -> None:
    # Prompts differ (log-odds sd 1): comparisons of one prompt move together. The truth is the
    # win rate averaged over prompts, simulated.
    log_odds = math.log(0.7 / 0.3) + np.random.default_rng(11).normal(0, 1.0, 200_000)
    truth = 0.1 + 0.8 * float(np.mean(1 / (1 + np.exp(-log_odds))))
    assert _coverage(np.random.default_rng(12), 0.7, 1.0, truth) >= 0.93


def test_soft_means_use_their_measured_spread() -> None:
    # Soft values 0.4, 0.6, 0.5, 0.5, 0.45, 0.55 on 6 prompts: mean 0.5, sample variance
    # (0.01 + 0.01 + 0.0025 + 0.0025) / 5 over 6, and the prompt-clustered one (one value a
    # prompt) 6/5 * 0.025 / 36, the same here; read with t(5), by hand.
    values = np.array([0.4, 0.6, 0.5, 0.5, 0.45, 0.55])
    ones = np.ones(6)
    (interval,) = mean_intervals(values[:, None], (values**2)[:, None], ones[:, None])
    half = 2.570582 * math.sqrt(6 / 5 * 0.025 / 36)
    assert interval["value"] == pytest.approx(0.5)
    assert interval["ci95"] == pytest.approx([0.5 - half, 0.5 + half], abs=1e-5)
    assert interval["method"] == "t-cluster"
    # Under 5 prompts, or values that do not vary at all: the Bernoulli bound's Wilson interval.
    for few in (values[:4], np.full(6, 0.5)):
        counts = np.ones(len(few))
        (bounded,) = mean_intervals(few[:, None], (few**2)[:, None], counts[:, None])
        assert bounded == proportion_intervals(few[:, None], counts[:, None])[0]
        assert bounded["ci95"][1] - bounded["ci95"][0] > 0.3
