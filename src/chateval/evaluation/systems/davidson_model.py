"""The Davidson-Bradley-Terry model of the panel's pairwise decisions, with the answers' length
difference as an optional covariate: its parameters laid out over grouped comparisons
(``Design``), and its penalised negative log-likelihood with the analytic gradient and Hessian
that ``davidson_fit`` minimises.

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
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from chateval.evaluation.systems.comparisons import ComparisonArrays

A_WON, B_WON, TIE = 0, 1, 2  # outcome categories, the order of the model's terms
NUISANCE_SHARE = 0.01  # the ridge on log(nu) and gamma, relative to the strengths'
LENGTH_COVARIATE = "(length_a - length_b) / (length_a + length_b), words"


def length_difference(length_a: np.ndarray, length_b: np.ndarray) -> np.ndarray:
    """The length covariate x of each comparison (``LENGTH_COVARIATE``): the length difference
    normalised by the total, in [-1, 1]; 0 when both answers are empty."""
    total = length_a + length_b
    x: np.ndarray = np.where(total > 0, (length_a - length_b) / np.where(total > 0, total, 1), 0.0)
    return x


@dataclass(frozen=True)
class Design:
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


def build_design(arrays: ComparisonArrays, anchor: int, length_control: bool) -> Design:
    category = np.where(arrays.outcome == 1.0, A_WON, np.where(arrays.outcome == 0.0, B_WON, TIE))
    x = np.zeros(len(arrays.length_a))
    if length_control:
        x = length_difference(arrays.length_a, arrays.length_b)
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
    # log(nu) and gamma only need to stay finite (davidson_fit's doc): a far weaker prior.
    penalty[len(others) :, len(others) :] *= NUISANCE_SHARE
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
    return Design(
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


def _log_terms(design: Design, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For parameters (batch, params): the outcome probabilities p (batch, rows, outcomes) and
    the log-normaliser of each row (batch, rows)."""
    k, rows, _ = design.local.shape
    padded = np.concatenate([params, np.zeros((len(params), 1))], axis=1)  # the dummy is 0
    u = (design.features @ padded.T).T.reshape(len(params), rows, k)
    top = u.max(axis=2, keepdims=True)
    exp = np.exp(u - top)
    norm = exp.sum(axis=2, keepdims=True)
    return exp / norm, (top + np.log(norm))[..., 0]


def _observed(design: Design, params: np.ndarray) -> np.ndarray:
    """The log unnormalised probability of each row's own outcome (batch, rows)."""
    padded = np.concatenate([params, np.zeros((len(params), 1))], axis=1)
    observed: np.ndarray = (design.observed_features @ padded.T).T
    return observed


def objective(design: Design, params: np.ndarray, weights: np.ndarray, ridge: float) -> np.ndarray:
    """Penalised negative log-likelihood of each batch row (batch,) at ``weights`` (batch, rows)."""
    _, lse = _log_terms(design, params)
    penalty = ridge * np.sum((params @ design.penalty) * params, axis=1)
    value: np.ndarray = -np.sum(weights * (_observed(design, params) - lse), axis=1) + penalty
    return value


def derivatives(
    design: Design, params: np.ndarray, weights: np.ndarray, ridge: float, hessian: bool = True
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
