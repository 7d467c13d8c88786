"""How sure the leaderboard's fit is: the covariance of the Davidson model's parameters, and the
95% intervals of any linear contrast of them (a rating, a difference of two ratings, log nu,
gamma), in a form that holds with few prompts.

Two covariances are computed at the fit (``davidson_fit.fit_point``):

- model-based: the inverse of the penalised negative log-likelihood's Hessian (the observed
  information), which is right when every comparison is an independent draw from the model;
- prompt-clustered (cluster-robust sandwich, the prompt as the cluster): H^-1 (sum_g s_g s_g^T)
  H^-1 * G / (G - 1), with s_g prompt g's score (the gradient of its comparisons' log-likelihood)
  and G the number of prompts (Liang and Zeger 1986; the G / (G - 1) is the usual small-sample
  correction, "CR1"). The comparisons of one prompt share its difficulty and its answers, so
  they are not independent evidence; this covariance lets them be correlated.

A contrast's variance is the larger of the two (the sandwich is biased low with few clusters
and noisy; the model-based one cannot see prompt effects: the larger is the safe one), read
with the Student t quantile on G - 1 degrees of freedom: with few clusters a variance estimated
from G prompt totals is itself uncertain (Cameron and Miller 2015, "A practitioner's guide to
cluster-robust inference", sections VI-VII). With fewer than ``MIN_PROMPTS_CLUSTERED`` prompts
the sandwich has too few clusters to mean anything: the interval is the model-based one with
the normal quantile, and ``method`` says that it assumes independent comparisons.

Why not the percentile bootstrap over prompts that earlier releases used: with G prompts it
behaves as a t interval read with 1.96 instead of t(G - 1) (89% coverage at 8 prompts in
``scripts/simulate_designs.py``), with 2 prompts it has 3 distinct resamples, and a system that
wins every comparison of a resample needs the ridge to keep the refit finite.
"""

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, t

from chateval.evaluation.systems.davidson_model import Design, derivatives
from chateval.evaluation.systems.proportion_interval import MIN_PROMPTS_CLUSTERED

CLUSTERED = "prompt-clustered"  # method names, as metrics.json stores them
INDEPENDENT = "model-based, assumes independent comparisons"


@dataclass(frozen=True)
class ParameterUncertainty:
    """The two covariances of a fit's parameters, and the prompts behind them (the quantile's
    degrees of freedom)."""

    model: np.ndarray  # (params, params): inverse penalised Hessian
    robust: np.ndarray | None  # (params, params): the prompt-clustered sandwich; None: too few prompts
    prompts: int

    @property
    def method(self) -> str:
        """``CLUSTERED`` or ``INDEPENDENT`` (see the module doc)."""
        return INDEPENDENT if self.robust is None else CLUSTERED

    def variance(self, contrast: np.ndarray) -> float:
        """The variance of ``contrast @ params``: the larger of the model-based and the
        prompt-clustered one."""
        value = float(contrast @ self.model @ contrast)
        if self.robust is not None:
            value = max(value, float(contrast @ self.robust @ contrast))
        return value

    def quantile(self, tests: int = 1, alpha: float = 0.05) -> float:
        """The two-sided (1 - alpha / tests) quantile the intervals read: Student t with
        (prompts - 1) degrees of freedom with the sandwich, the normal's without."""
        tail = 1 - alpha / (2 * tests)
        return float(norm.ppf(tail) if self.robust is None else t.ppf(tail, self.prompts - 1))

    def half_width(self, contrast: np.ndarray, tests: int = 1, alpha: float = 0.05) -> float:
        """Half the 95% interval's width of ``contrast @ params``; with ``tests`` > 1 or another
        ``alpha``, of the (1 - alpha) interval that holds jointly with ``tests`` - 1 others
        (Bonferroni: each at 1 - alpha / tests)."""
        return self.quantile(tests, alpha) * float(np.sqrt(self.variance(contrast)))


def parameter_uncertainty(design: Design, params: np.ndarray, ridge: float) -> ParameterUncertainty:
    """The covariances of the fit ``params`` of ``design`` (see the module doc)."""
    weights = design.weights
    prompts = len(weights)
    _, _, hessian = derivatives(design, params[None], weights.sum(axis=0)[None], ridge)
    assert hessian is not None
    inverse = np.linalg.inv(hessian[0])
    if prompts < MIN_PROMPTS_CLUSTERED:
        return ParameterUncertainty(inverse, None, prompts)
    # Each prompt's score: the gradient of its own comparisons' log-likelihood (no ridge).
    _, scores, _ = derivatives(design, np.tile(params, (prompts, 1)), weights, 0.0, hessian=False)
    meat = scores.T @ scores * prompts / (prompts - 1)
    robust = inverse @ meat @ inverse
    return ParameterUncertainty(inverse, robust, prompts)
