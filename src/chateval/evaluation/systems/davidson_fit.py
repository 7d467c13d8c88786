"""Fitting the Davidson model (``davidson_model``) to comparisons.

Fit. Parameters are the log-strengths relative to an anchor system (its theta is 0: the model
only sees differences, and anchoring makes it identifiable), log(nu) when there are ties, and
gamma with length control; they maximise the log-likelihood minus a small ridge penalty,

    RIDGE * (sum_i (theta_i - mean theta)^2 + NUISANCE_SHARE * (log(nu)^2 + gamma^2)),

with RIDGE = 0.01 and NUISANCE_SHARE = 0.01 (the strengths' part centred over all systems, so
that it does not depend on the anchor: another anchor shifts all ratings alike), found with
scipy's trust-region Newton method (``minimize(method="trust-exact")``) and the analytic gradient
and Hessian. The negative log-likelihood is convex (a log-sum-exp of linear functions minus a
linear term) and the ridge makes it strictly so: the optimum is unique.

Why the ridge: a system that wins (or loses) all its comparisons has an infinite
maximum-likelihood strength, a panel that always ties an infinite log(nu), and answer lengths
that separate the outcomes an infinite gamma; the ridge keeps every fit finite. It is a normal
prior with a standard deviation of 7 on each centred log-strength (1 / sqrt(2 RIDGE)) and 70 on
log(nu) and gamma: where the maximum-likelihood estimate exists it moves a strength by about
``2 * RIDGE * theta / (its comparisons / 4)``, under 0.001 for a few hundred comparisons (the
reference test holds the fit to ``choix``'s to 1e-3) and about 0.01 (4 rating points) on 12,
and the tie and length terms by less still; the tests hold every estimate of a small real run
to the unpenalised fit within a tenth of its interval's half-width. ``ridge=0`` gives the
plain MLE.

Scale. rating_i = 1000 + 400 * log10(pi_i / pi_anchor): 1000 is the anchor (the first system by
default), and 400 points mean 10:1 odds of winning a decisive verdict, as in Elo.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from chateval.evaluation.systems.comparisons import Comparison, ComparisonArrays, comparison_arrays
from chateval.evaluation.systems.davidson_model import Design, build_design, derivatives

RIDGE = 0.01
BASE_RATING = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)  # rating points per unit of log-strength


@dataclass(frozen=True)
class DavidsonFit:
    """A fitted model: log-strengths relative to ``anchor`` (its own is 0), the tie parameter
    nu (None: no ties in the data, plain Bradley-Terry) and the length coefficient gamma (None
    without length control)."""

    systems: tuple[str, ...]
    anchor: str
    log_strengths: dict[str, float]
    nu: float | None
    gamma: float | None
    converged: bool

    def ratings(self) -> dict[str, float]:
        """Each system's rating on the Elo-like scale (the anchor at ``BASE_RATING``)."""
        return {name: BASE_RATING + ELO_SCALE * theta for name, theta in self.log_strengths.items()}


def fit_point(design: Design, weights: np.ndarray, ridge: float) -> tuple[np.ndarray, bool]:
    """The full-data fit: scipy's ``trust-exact`` with the analytic gradient and Hessian.

    Why not L-BFGS-B: with the exact Hessian at hand a trust-region Newton method converges in
    a handful of iterations to machine precision; and L-BFGS-B (scipy 1.17, threaded OpenBLAS)
    took ~50 ms for a 6-parameter fit on a busy 2-core machine, against ~1 ms here."""

    def fun(params: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad, _ = derivatives(design, params[None], weights[None], ridge, hessian=False)
        return float(value[0]), grad[0]

    def hess(params: np.ndarray) -> np.ndarray:
        _, _, second = derivatives(design, params[None], weights[None], ridge)
        assert second is not None
        return np.asarray(second[0])

    # A tolerance far below the intervals' resolution.
    result = minimize(
        fun, np.zeros(design.size), jac=True, hess=hess, method="trust-exact", options={"gtol": 1e-9}
    )
    params = np.asarray(result.x, dtype=float)
    return without_solver_noise(params, fun(params)[1], hess(params)), bool(result.success)


def without_solver_noise(params: np.ndarray, gradient: np.ndarray, hessian: np.ndarray) -> np.ndarray:
    """``params`` with every entry that the solver cannot tell from zero set to zero.

    The objective is strictly convex, so the optimum lies within |gradient| / lambda_min of the
    point the solver stopped at (lambda_min the Hessian's smallest eigenvalue). An entry closer
    to zero than that is solver noise: a panel that tied every comparison fits a length
    coefficient of 1.7e-10 on one machine and 1.7e-10 with other trailing digits on another
    (another BLAS kernel), and the run folder would store a different number on each. Zero is
    within the solver's own error of the optimum; storing it makes the result the same
    everywhere."""
    smallest = float(np.linalg.eigvalsh(hessian)[0]) if hessian.size else 0.0
    if smallest <= 0:
        return params
    # at least 1e-12: a gradient that rounds to zero still leaves last-bit noise in the entries
    resolution = max(float(np.linalg.norm(gradient)) / smallest, 1e-12)
    return np.where(np.abs(params) <= resolution, 0.0, params)


def _connected(arrays: ComparisonArrays) -> bool:
    """Whether every system is linked to every other by a chain of comparisons (else their
    relative strength is not identified by the data)."""
    parent = list(range(len(arrays.systems)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(arrays.a.tolist(), arrays.b.tolist(), strict=True):
        parent[root(a)] = root(b)
    return len({root(i) for i in range(len(parent))}) == 1


def prepare_fit(
    comparisons: Sequence[Comparison], systems: Sequence[str] | None, anchor: str | None, length_control: bool
) -> tuple[ComparisonArrays, int, Design]:
    """Index the comparisons, check that their fit is identified (2 systems at least, a known
    anchor, one connected group) and lay out its design: the arrays, the anchor's position
    (default: the first system) and the design."""
    arrays = comparison_arrays(comparisons, systems)
    if len(arrays.systems) < 2:
        raise ValueError("a leaderboard needs at least 2 systems")
    name = arrays.systems[0] if anchor is None else anchor
    if name not in arrays.systems:
        raise ValueError(f"anchor {name!r} is not one of the systems ({', '.join(arrays.systems)})")
    if not _connected(arrays):
        raise ValueError(
            "the systems do not form one connected group of comparisons: their relative strengths "
            "are not identified"
        )
    index = arrays.systems.index(name)
    return arrays, index, build_design(arrays, index, length_control)


def log_strengths(design: Design, params: np.ndarray) -> np.ndarray:
    """Log-strengths of all systems (..., systems), the anchor's 0."""
    padded = np.concatenate([params, np.zeros(params.shape[:-1] + (1,))], axis=-1)
    theta: np.ndarray = padded[..., design.theta_column]  # the anchor's column is the appended 0
    return theta


def fit_davidson(
    comparisons: Sequence[Comparison],
    systems: Sequence[str] | None = None,
    anchor: str | None = None,
    length_control: bool = False,
    ridge: float = RIDGE,
) -> DavidsonFit:
    """Fit the Davidson model (with the length covariate if ``length_control``) on all
    comparisons; see ``davidson_model``'s doc for the model, this module's for the anchor and the
    ridge (``ridge=0`` gives the plain MLE, which is infinite for a system that won or lost
    everything)."""
    arrays, index, design = prepare_fit(comparisons, systems, anchor, length_control)
    params, converged = fit_point(design, design.weights.sum(axis=0), ridge)
    theta = log_strengths(design, params)
    return DavidsonFit(
        systems=arrays.systems,
        anchor=arrays.systems[index],
        log_strengths={name: float(theta[i]) for i, name in enumerate(arrays.systems)},
        nu=None if design.tie_column is None else math.exp(params[design.tie_column]),
        gamma=None if design.gamma_column is None else float(params[design.gamma_column]),
        converged=converged,
    )
