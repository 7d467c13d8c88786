"""The interval of a mean over prompts (a system's mean direct score, or the mean difference of
two systems' scores on the prompts both were scored on), that holds with few prompts and with
scores crowded at the top of the scale.

Each prompt gives one value, and prompts are the independent units. The values are rescaled to
[0, 1] by the scale's ``bounds`` (lowest 0, highest 1; a difference's bounds run from
low - high to high - low), and the interval is Wilson's score interval at an effective count, as
the win rates' is (``proportion_interval``; Korn & Graubard 1998):

- a value in [0, 1] with mean p has variance at most p (1 - p) (all at the two ends); the
  measured variance s^2 (over n - 1) gives the effective count n_eff = n p (1 - p) / s^2
  (about n or more: scores spread to both ends are as uncertain as wins and losses);
- s is at least what one of n equal values one scale ``step`` away would give (step over
  sqrt(n), rescaled), and p (1 - p) at least that of a mean one step over n from a bound, so
  that n prompts that all scored 10 do not prove the mean is exactly 10 (the percentile
  bootstrap this replaced gave [10, 10]) and are bounded about as tightly as nine 10s and a 9;
- the quantile is Student's t on n - 1 degrees of freedom; one prompt gives the whole scale.

Wilson's interval is asymmetric near a bound, where the scores are skewed; a plain t interval
(mean +- t s / sqrt(n)) covered 93.5% of the means of systems scoring about 9.5 of 10 on 20
prompts in ``scripts/simulate_intervals.py --only direct`` (docs/performance/intervals.json
holds this method's rows: 2 to 40 prompts, spread-out scores with prompt effects and scores near
the top).
"""

import numpy as np
from scipy.stats import t

from chateval.evaluation.binomial import CONFIDENCE
from chateval.evaluation.systems.proportion_interval import wilson
from chateval.schema.agreement import Interval

METHOD = "wilson-effective-n over prompts"


def mean_interval(values: np.ndarray, bounds: tuple[float, float], step: float = 1.0) -> Interval:
    """The mean of ``values`` (one per prompt, at least one) with its 95% interval within
    ``bounds`` (the module doc)."""
    n = len(values)
    mean = float(np.mean(values))
    low, high = bounds
    if n < 2:
        return {"value": mean, "ci95": [float(low), float(high)]}
    width = high - low
    p = (mean - low) / width
    unit = step / width / n  # one step over n prompts, rescaled
    spread = max(float(np.var(values, ddof=1)) / width**2, unit * unit * n)
    bernoulli = max(p * (1 - p), unit * (1 - unit))
    count = n * bernoulli / spread
    q = float(t.ppf(1 - (1 - CONFIDENCE) / 2, n - 1))
    lower, upper = wilson(np.array(p), np.array(count), np.array(q))
    return {"value": mean, "ci95": [low + width * float(lower), low + width * float(upper)]}
