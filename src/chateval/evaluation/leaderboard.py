"""A leaderboard of systems from the panel's pairwise decisions: Bradley-Terry strengths with
ties modelled explicitly (Davidson 1970), on an Elo-like scale, with bootstrap intervals over
prompts; and the same model with the answers' length difference as a covariate (a
length-controlled leaderboard, as Chatbot Arena's style control).

The model. System i has a log-strength theta_i (pi_i = exp(theta_i)); the panel's decision
between A and B on one prompt is a win of A, a tie or a win of B with probabilities
proportional to

    pi_A,   nu * sqrt(pi_A * pi_B),   pi_B

(Davidson's tie model: a tie is likeliest between equals, and nu > 0 sets how common ties are).
The simpler alternative, a tie as half a win of each side in a logistic fit, has no likelihood
of its own; Davidson's model keeps a tie one observation with its own probability, and its nu
says how often the panel declines to choose. With no ties in the data the maximum-likelihood
nu is 0 and the model is plain Bradley-Terry (the reference test checks it against
``choix``): the fit then leaves the tie term out rather than push log(nu) towards minus
infinity.

Length control adds ``gamma * x`` to the log-odds of A over B, where x = (len_A - len_B) /
(len_A + len_B) is the length difference normalised by the total (in [-1, 1]; 0 when both are
empty): the strengths are multiplied by exp(+gamma x / 2) and exp(-gamma x / 2), which leaves
the tie term (the geometric mean of the two) unchanged. Without ties this is exactly arena's
logistic model with one style feature (normalised, not standardised, so gamma reads directly:
with A twice as long as B, x = 1/3 and the odds of A move by exp(gamma / 3)). The strengths of
the length-controlled board are then what each system would score against an opponent of
equal length.

Fit. Parameters are the log-strengths relative to an anchor system (its theta is 0: the model
only sees differences, and anchoring makes it identifiable), log(nu) when there are ties, and
gamma with length control; they maximise the log-likelihood minus a small ridge penalty,

    RIDGE * (sum_i (theta_i - mean theta)^2 + log(nu)^2 + gamma^2),   RIDGE = 0.01,

(the strengths' part centred over all systems, so that it does not depend on the anchor: another
anchor shifts all ratings alike), found with scipy's trust-region Newton method
(``minimize(method="trust-exact")``) and the analytic gradient and Hessian. The negative
log-likelihood is convex (a log-sum-exp of linear functions minus a linear term) and the ridge
makes it strictly so: the optimum is unique. Why the ridge: a system that wins (or loses) all
its comparisons, in the data or in a bootstrap resample, has an infinite maximum-likelihood
strength (so has log(nu) in a resample without ties), and one infinite refit would make a
percentile interval meaningless; the ridge keeps every fit finite. It is small next to the
likelihood (which sums over comparisons), so where the MLE exists it moves a strength by about
``2 * RIDGE * theta / (its comparisons / 4)``: under 0.001 for a few hundred comparisons (the
reference test holds the fit to ``choix``'s to 1e-3), about 0.01 (4 rating points) on 12.
``ridge=0`` gives the plain MLE (``fit_davidson`` only: the bootstrap needs the ridge).

Scale. rating_i = 1000 + 400 * log10(pi_i / pi_anchor): 1000 is the anchor (the first system by
default), and 400 points mean 10:1 odds of winning a decisive verdict, as in Elo.

Intervals. Prompts are resampled with replacement (the same resamples as ``win_rates``), all
comparisons of a drawn prompt kept, the model refitted on each resample, and the interval is
the 2.5th-97.5th percentile of the refitted ratings (the anchor's is [1000, 1000]: the ratings
are differences to it). The refits are cheap: comparisons that share the systems, the outcome
and (with length control) the covariate are one weighted row, a resample only reweights the
rows, and all resamples are refitted at once by a vectorised Newton method with the exact
Hessian, started from the full-data fit. ``N_RESAMPLES`` = 500 by default: the percentiles of a
95% interval rest on the 12 or 13 most extreme refits on either side.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from chateval.core.schema import Interval
from chateval.evaluation.comparisons import Comparison, ComparisonArrays, comparison_arrays
from chateval.evaluation.prompt_bootstrap import percentile_intervals, resample_counts

N_RESAMPLES = 500
RIDGE = 0.01
BASE_RATING = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)  # rating points per unit of log-strength
A_WON, B_WON, TIE = 0, 1, 2  # outcome categories, the order of the model's terms
BATCH_CELLS = 4_000_000  # numbers per array in one batch of refits (32 MB of floats)
LENGTH_COVARIATE = "(length_a - length_b) / (length_a + length_b), words"


class LeaderboardRow(TypedDict):
    rank: int  # 1 = highest rating
    system: str
    rating: float
    ci95: list[float]
    n: int  # comparisons the system took part in
    wins: int
    ties: int
    losses: int
    mean_length: float  # words, over the system's distinct (prompt, answer)s


class Leaderboard(TypedDict):
    anchor: str
    scale: str
    length_control: bool
    length_covariate: str | None  # what x is, with length control
    length_coefficient: Interval | None  # gamma, with length control
    tie_parameter: Interval | None  # nu; None when the data have no ties (plain Bradley-Terry)
    rows: list[LeaderboardRow]
    prompts: int
    comparisons: int
    resamples: int
    ridge: float


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


@dataclass(frozen=True)
class _Design:
    """The model in each row's own coordinates. A row is a group of identical comparisons
    (systems, outcome, covariate), ``weights[p, r]`` of them on prompt p. A row involves four
    parameters at most, (theta_A, theta_B, log nu, gamma), whose positions in the parameter
    vector are ``index[r]`` (``size``, a dummy fixed at 0, for the anchor's theta or an absent
    term); the log of outcome k's unnormalised probability is ``local[k, r] @ those four``:

        A won: (1, 0, 0, x/2)    B won: (0, 1, 0, -x/2)    tie: (1/2, 1/2, 1, 0)

    Sums over rows are products with sparse matrices that put these local terms in place, so
    a resample's cost grows with the rows, not with rows x params^2 as dense features would
    (which made 16 systems with length control on 12,000 comparisons take minutes)."""

    local: np.ndarray  # (outcomes, rows, 4)
    index: np.ndarray  # (rows, 4): parameter positions, ``size`` for the dummy
    weights: np.ndarray  # (prompts, rows)
    theta_column: np.ndarray  # (systems,): a system's parameter, ``size`` for the anchor
    tie_column: int | None
    gamma_column: int | None
    penalty: np.ndarray  # (params, params): the ridge is ridge * params @ penalty @ params
    # The same features in the parameter vector's coordinates, as sparse matrices (each row
    # touches four parameters at most), with the dummy's column ``size`` kept: for a row r and
    # an outcome k (matrix row r * outcomes + k), its features f (size + 1 columns) ...
    features: Any  # scipy.sparse (rows * outcomes, size + 1)
    # ... and f f^T flattened ((size + 1)^2 columns); ``spread`` puts a row's local 4 x 4 block
    # (flattened, matrix row r * 16 + 4 i + j) in its place. Stored transposed where they are
    # used transposed (a sparse transpose is a new matrix each time).
    features_t: Any  # (size + 1, rows * outcomes)
    squares_t: Any  # ((size + 1)^2, rows * outcomes)
    spread_t: Any  # ((size + 1)^2, rows * 16)
    observed_features: Any  # (rows, size + 1)
    observed_features_t: Any  # (size + 1, rows)

    @property
    def size(self) -> int:
        return int(self.penalty.shape[0])


def _design(arrays: ComparisonArrays, anchor: int, length_control: bool) -> _Design:
    category = np.where(arrays.outcome == 1.0, A_WON, np.where(arrays.outcome == 0.0, B_WON, TIE))
    total = arrays.length_a + arrays.length_b
    x = np.zeros(len(total))
    if length_control:
        x = np.where(total > 0, (arrays.length_a - arrays.length_b) / np.where(total > 0, total, 1), 0.0)
    keys = np.stack([arrays.a, arrays.b, category, x], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    a, b, cat, xs = unique[:, 0].astype(int), unique[:, 1].astype(int), unique[:, 2].astype(int), unique[:, 3]

    n_systems = len(arrays.systems)
    others = [s for s in range(n_systems) if s != anchor]
    ties = bool(np.any(category == TIE))
    size = len(others) + int(ties) + int(length_control)
    theta_column = np.full(n_systems, size)  # the anchor's theta is the dummy 0
    theta_column[others] = np.arange(len(others))
    tie_column = len(others) if ties else None
    gamma_column = size - 1 if length_control else None

    rows = len(unique)
    local = np.zeros((3, rows, 4))
    local[A_WON, :, 0] = 1.0
    local[A_WON, :, 3] = xs / 2
    local[B_WON, :, 1] = 1.0
    local[B_WON, :, 3] = -xs / 2
    local[TIE, :, :3] = (0.5, 0.5, 1.0)
    if not ties:
        local = local[:TIE]  # no tie term at all: plain Bradley-Terry
    index = np.stack(
        [
            theta_column[a],
            theta_column[b],
            np.full(rows, size if tie_column is None else tie_column),
            np.full(rows, size if gamma_column is None else gamma_column),
        ],
        axis=1,
    )
    weights = np.zeros((len(arrays.prompts), rows))
    np.add.at(weights, (arrays.prompt, inverse), 1.0)
    # The ridge on the log-strengths is sum_i (theta_i - mean theta)^2 over all systems, the
    # anchor's 0 included: it depends on differences only, so the choice of anchor shifts every
    # rating by the same amount and changes nothing else (a penalty on the anchored parameters
    # themselves would pull every system towards the anchor).
    penalty = np.eye(size)
    penalty[: len(others), : len(others)] -= 1.0 / n_systems
    width = size + 1
    k = len(local)
    block = (index[:, :, None] * width + index[:, None, :]).reshape(rows, 16)
    cells = np.arange(rows * k)
    features = sparse.csr_array(
        (local.transpose(1, 0, 2).ravel(), (np.repeat(cells, 4), np.repeat(index, k, axis=0).ravel())),
        shape=(rows * k, width),
    )
    squares = (local[..., :, None] * local[..., None, :]).reshape(k, rows, 16).transpose(1, 0, 2)
    observed_features = sparse.csr_array(
        (local[cat, np.arange(rows)].ravel(), (np.repeat(np.arange(rows), 4), index.ravel())),
        shape=(rows, width),
    )
    return _Design(
        local=local,
        index=index,
        weights=weights,
        theta_column=theta_column,
        tie_column=tie_column,
        gamma_column=gamma_column,
        penalty=penalty,
        features=features,
        features_t=features.T.tocsr(),
        squares_t=sparse.csr_array(
            (squares.ravel(), (np.repeat(block, k, axis=0).ravel(), np.repeat(cells, 16))),
            shape=(width * width, rows * k),
        ),
        spread_t=sparse.csr_array(
            (np.ones(rows * 16), (block.ravel(), np.arange(rows * 16))), shape=(width * width, rows * 16)
        ),
        observed_features=observed_features,
        observed_features_t=observed_features.T.tocsr(),
    )


def _log_terms(design: _Design, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For parameters (batch, params): the outcome probabilities p (batch, rows, outcomes) and
    the log-normaliser of each row (batch, rows)."""
    k, rows, _ = design.local.shape
    padded = np.concatenate([params, np.zeros((len(params), 1))], axis=1)  # the dummy is 0
    u = (design.features @ padded.T).T.reshape(len(params), rows, k)
    top = u.max(axis=2, keepdims=True)
    exp = np.exp(u - top)
    norm = exp.sum(axis=2, keepdims=True)
    return exp / norm, (top + np.log(norm))[..., 0]


def _observed(design: _Design, params: np.ndarray) -> np.ndarray:
    """The log unnormalised probability of each row's own outcome (batch, rows)."""
    padded = np.concatenate([params, np.zeros((len(params), 1))], axis=1)
    observed: np.ndarray = (design.observed_features @ padded.T).T
    return observed


def _objective(design: _Design, params: np.ndarray, weights: np.ndarray, ridge: float) -> np.ndarray:
    """Penalised negative log-likelihood of each batch row (batch,) at ``weights`` (batch, rows)."""
    _, lse = _log_terms(design, params)
    penalty = ridge * np.sum((params @ design.penalty) * params, axis=1)
    value: np.ndarray = -np.sum(weights * (_observed(design, params) - lse), axis=1) + penalty
    return value


def _derivatives(
    design: _Design, params: np.ndarray, weights: np.ndarray, ridge: float, hessian: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Objective (batch,), gradient (batch, params) and Hessian (batch, params, params).

    With p a row's outcome probabilities and m = sum_k p_k f_k its expected features, the
    gradient is sum_r w_r (m_r - f_observed) and the Hessian sum_r w_r Cov_p(f) =
    sum_r w_r (sum_k p_k f_k f_k^T - m_r m_r^T), plus the ridge's terms. Sums over rows are
    products with the sparse feature matrices; m m^T is formed in each row's four coordinates.
    """
    p, lse = _log_terms(design, params)
    shrink = ridge * params @ design.penalty
    value = -np.sum(weights * (_observed(design, params) - lse), axis=1) + np.sum(shrink * params, axis=1)
    batch, size = params.shape
    wp = (weights[:, :, None] * p).reshape(batch, -1).T  # (rows * outcomes, batch)
    expected = (design.features_t @ wp - design.observed_features_t @ weights.T).T
    grad = expected[:, :size] + 2 * shrink
    if not hessian:
        return value, grad, None
    width = size + 1
    # m in local coordinates, sums over the 2 or 3 outcomes written out (faster than einsum).
    mean = sum(p[:, :, k, None] * local for k, local in enumerate(design.local))  # (batch, rows, 4)
    assert isinstance(mean, np.ndarray)
    mm = (weights[:, :, None, None] * mean[..., :, None] * mean[..., None, :]).reshape(batch, -1).T
    flat = (design.squares_t @ wp - design.spread_t @ mm).T  # (batch, width^2)
    hess = flat.reshape(batch, width, width)[:, :size, :size] + 2 * ridge * design.penalty
    return value, grad, hess


def _fit_point(design: _Design, weights: np.ndarray, ridge: float) -> tuple[np.ndarray, bool]:
    """The full-data fit: scipy's ``trust-exact`` with the analytic gradient and Hessian.

    Why not L-BFGS-B: with the exact Hessian at hand a trust-region Newton method converges in
    a handful of iterations to machine precision; and L-BFGS-B (scipy 1.17, threaded OpenBLAS)
    took ~50 ms for a 6-parameter fit on a busy 2-core machine, against ~1 ms here."""

    def fun(params: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad, _ = _derivatives(design, params[None], weights[None], ridge, hessian=False)
        return float(value[0]), grad[0]

    def hess(params: np.ndarray) -> np.ndarray:
        _, _, second = _derivatives(design, params[None], weights[None], ridge)
        assert second is not None
        return np.asarray(second[0])

    # A tolerance far below the intervals' resolution: the bootstrap starts from this point.
    result = minimize(
        fun, np.zeros(design.size), jac=True, hess=hess, method="trust-exact", options={"gtol": 1e-9}
    )
    return np.asarray(result.x, dtype=float), bool(result.success)


def _fit_batch(
    design: _Design, weights: np.ndarray, start: np.ndarray, ridge: float, max_iter: int = 50
) -> np.ndarray:
    """Refit every row of ``weights`` (one bootstrap resample each) at once: damped Newton
    steps with a backtracking (Armijo) line search, from ``start``. The penalised objective is
    strictly convex (ridge > 0), so Newton converges fast from the full-data fit; a resample
    stops moving once its Newton decrement is negligible."""
    params = np.tile(start, (len(weights), 1))
    value, grad, hess = _derivatives(design, params, weights, ridge)
    for _ in range(max_iter):
        assert hess is not None
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        decrement = np.sum(grad * step, axis=1)
        active = decrement > 1e-12
        if not active.any():
            break
        t = np.ones(len(params))
        for _ in range(40):
            trial = params - t[:, None] * step
            trial_value = _objective(design, trial, weights, ridge)
            # Near the optimum the full Newton step is safe, and the objective's rounding error
            # (~1e-13 of its size) would swamp the Armijo test's tiny decrease: skip the test.
            ok = ~active | (decrement < 1e-6) | (trial_value <= value - 1e-4 * t * decrement)
            if ok.all():
                break
            t = np.where(ok, t, t / 2)
        params = np.where(active[:, None], trial, params)
        value, grad, hess = _derivatives(design, params, weights, ridge)
    return params


def _refit(design: _Design, counts: np.ndarray, start: np.ndarray, ridge: float) -> np.ndarray:
    """The parameters refitted on every resample (rows of ``counts``), in chunks of resamples
    small enough that the batch's arrays stay within ``BATCH_CELLS`` numbers: memory stays
    bounded on large runs."""
    rows = design.local.shape[1]
    chunk = max(1, BATCH_CELLS // (rows * 16))  # the Hessian's (batch, rows, 4, 4)
    parts = [
        _fit_batch(design, counts[i : i + chunk] @ design.weights, start, ridge)
        for i in range(0, len(counts), chunk)
    ]
    return np.concatenate(parts) if parts else np.zeros((0, design.size))


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


def _prepare(
    comparisons: Sequence[Comparison], systems: Sequence[str] | None, anchor: str | None, length_control: bool
) -> tuple[ComparisonArrays, int, _Design]:
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
    return arrays, index, _design(arrays, index, length_control)


def _unpack(design: _Design, params: np.ndarray) -> np.ndarray:
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
    comparisons; see the module doc for the model, the anchor and the ridge (``ridge=0`` gives
    the plain MLE, which is infinite for a system that won or lost everything)."""
    arrays, index, design = _prepare(comparisons, systems, anchor, length_control)
    params, converged = _fit_point(design, design.weights.sum(axis=0), ridge)
    theta = _unpack(design, params)
    return DavidsonFit(
        systems=arrays.systems,
        anchor=arrays.systems[index],
        log_strengths={name: float(theta[i]) for i, name in enumerate(arrays.systems)},
        nu=None if design.tie_column is None else math.exp(params[design.tie_column]),
        gamma=None if design.gamma_column is None else float(params[design.gamma_column]),
        converged=converged,
    )


def leaderboard(
    comparisons: Sequence[Comparison],
    systems: Sequence[str] | None = None,
    anchor: str | None = None,
    length_control: bool = False,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    ridge: float = RIDGE,
) -> Leaderboard:
    """Rank the systems by their Davidson-Bradley-Terry rating, with 95% bootstrap intervals
    over prompts (see the module doc); ``length_control`` fits the length covariate too and
    reports its coefficient gamma. Seeded and deterministic. ``ridge`` must be > 0 when
    resampling (the refits rely on it to stay finite)."""
    if n_resamples > 0 and ridge <= 0:
        raise ValueError("bootstrap refits need a ridge > 0")
    arrays, index, design = _prepare(comparisons, systems, anchor, length_control)
    params, _ = _fit_point(design, design.weights.sum(axis=0), ridge)
    counts = resample_counts(len(arrays.prompts), n_resamples, seed)
    replicates = _refit(design, counts, params, ridge)
    ratings = BASE_RATING + ELO_SCALE * _unpack(design, params)
    rating_reps = BASE_RATING + ELO_SCALE * _unpack(design, replicates)
    intervals = percentile_intervals(ratings, rating_reps)

    n_systems = len(arrays.systems)
    n = np.bincount(arrays.a, minlength=n_systems) + np.bincount(arrays.b, minlength=n_systems)
    wins = np.bincount(arrays.a[arrays.outcome == 1.0], minlength=n_systems) + np.bincount(
        arrays.b[arrays.outcome == 0.0], minlength=n_systems
    )
    ties = np.bincount(arrays.a[arrays.outcome == 0.5], minlength=n_systems) + np.bincount(
        arrays.b[arrays.outcome == 0.5], minlength=n_systems
    )
    lengths = _mean_lengths(arrays)
    # Rounded to 0.001 points: equal strengths that the fit leaves a tolerance apart keep the
    # systems' listed order.
    order = sorted(range(n_systems), key=lambda i: (-round(float(ratings[i]), 3), i))
    rows: list[LeaderboardRow] = [
        {
            "rank": rank,
            "system": arrays.systems[i],
            "rating": intervals[i]["value"],
            "ci95": intervals[i]["ci95"],
            "n": int(n[i]),
            "wins": int(wins[i]),
            "ties": int(ties[i]),
            "losses": int(n[i] - wins[i] - ties[i]),
            "mean_length": lengths[i],
        }
        for rank, i in enumerate(order, start=1)
    ]
    tie_parameter = gamma = None
    if design.tie_column is not None:
        column = design.tie_column
        tie_parameter = percentile_intervals(np.exp(params[[column]]), np.exp(replicates[:, [column]]))[0]
    if design.gamma_column is not None:
        column = design.gamma_column
        gamma = percentile_intervals(params[[column]], replicates[:, [column]])[0]
    return {
        "anchor": arrays.systems[index],
        "scale": f"{BASE_RATING:g} + 400 log10(strength / strength of {arrays.systems[index]})",
        "length_control": length_control,
        "length_covariate": LENGTH_COVARIATE if length_control else None,
        "length_coefficient": gamma,
        "tie_parameter": tie_parameter,
        "rows": rows,
        "prompts": len(arrays.prompts),
        "comparisons": len(comparisons),
        "resamples": len(counts),
        "ridge": ridge,
    }


def _mean_lengths(arrays: ComparisonArrays) -> list[float]:
    """Each system's mean answer length over its distinct prompts (an answer compared several
    times on one prompt counts once, so systems that meet more opponents are not weighted by it)."""
    n_prompts = len(arrays.prompts)
    answer = np.concatenate([arrays.a, arrays.b]) * n_prompts + np.concatenate([arrays.prompt, arrays.prompt])
    lengths = np.concatenate([arrays.length_a, arrays.length_b])
    keys, inverse = np.unique(answer, return_inverse=True)
    per_answer = np.bincount(inverse, weights=lengths) / np.bincount(inverse)
    system = keys // n_prompts
    totals = np.bincount(system, weights=per_answer, minlength=len(arrays.systems))
    means = totals / np.bincount(system, minlength=len(arrays.systems))
    return [float(v) for v in means]


def simulate_davidson(
    strengths: Mapping[str, float],
    nu: float,
    pairs: Sequence[tuple[str, str, str]],
    rng: np.random.Generator,
    gamma: float = 0.0,
    lengths: Mapping[tuple[str, str], int] | None = None,
) -> list[Comparison]:
    """Draw one panel decision per (prompt, system_a, system_b) of ``pairs`` from the Davidson
    model with log-strengths ``strengths`` and tie parameter ``nu`` (0: no ties), and with the
    length covariate's coefficient ``gamma`` when ``lengths`` gives each (prompt, system)'s
    answer length (missing: lengths 0, no covariate). For planted-ranking checks: ``soft`` is
    None."""
    if nu < 0:
        raise ValueError("nu must be >= 0")
    if not pairs:
        return []
    theta_a = np.array([strengths[a] for _, a, _ in pairs], dtype=float)
    theta_b = np.array([strengths[b] for _, _, b in pairs], dtype=float)
    size = lengths or {}
    length_a = np.array([size.get((p, a), 0) for p, a, _ in pairs], dtype=float)
    length_b = np.array([size.get((p, b), 0) for p, _, b in pairs], dtype=float)
    total = length_a + length_b
    x = np.where(total > 0, (length_a - length_b) / np.where(total > 0, total, 1), 0.0)
    with np.errstate(divide="ignore"):
        terms = np.stack(
            [theta_a + gamma * x / 2, theta_b - gamma * x / 2, np.log(nu) + (theta_a + theta_b) / 2], axis=1
        )
    probs = np.exp(terms - terms.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    draw = rng.random(len(pairs))
    outcome = np.where(
        draw < probs[:, A_WON], 1.0, np.where(draw < probs[:, A_WON] + probs[:, TIE], 0.5, 0.0)
    )
    return [
        Comparison(
            prompt=p,
            system_a=a,
            system_b=b,
            outcome=float(o),
            soft=None,
            length_a=int(la),
            length_b=int(lb),
        )
        for (p, a, b), o, la, lb in zip(pairs, outcome, length_a, length_b, strict=True)
    ]
