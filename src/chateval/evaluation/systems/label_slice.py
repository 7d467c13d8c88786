"""Whether the human-labelled comparisons look like a uniformly random slice of all of them, as
prediction-powered inference needs: an exact test of the labelled share across pairs of systems.

A slice confined to some pairs (labels only on the comparisons of one system, say) leaves the
panel's errors on the other pairs uncorrected, and the calibrated ratings lean the panel's way
there. Under a uniformly random slice (n labels drawn from the M comparisons, or each labelled
with one chance, given how many were), the labelled counts of the pairs are multivariate
hypergeometric: pair k's l_k of its m_k comparisons, n of M in all. The statistic is Pearson's
chi-square of the pairs x (labelled, unlabelled) table, and its p-value the share of ``DRAWS``
draws of that distribution whose statistic is at least the slice's, the slice counted among
them (so p >= 1 / (DRAWS + 1)). No large-sample approximation: a handful of labels per pair is
the common case. The draws are seeded, so one slice always gets the same p-value; under a random
slice p <= alpha happens with probability about alpha (at most alpha, up to the draws'
precision, and less when the counts are few: the test is discrete).

- p < ``FLAG_P`` (0.05): flagged, the pairs whose labelled count lies furthest from its share
  named (``uneven``); a random slice is flagged about 5% of the time or less (in the calibrated
  rows of ``scripts/simulate_intervals.py``, 1.7% to 5.8% of the slices of a setting, 3.5% of
  all 47,006).
- p < ``REFUSE_P`` (0.001): a slice this uneven comes from a random draw once in a thousand at
  most (25 of the simulations' 24,000 random slices of 40 labels or more), so
  ``calibrated_leaderboard`` refuses it rather than show a correction that does not hold.

Only the pairs are tested: a slice chosen by something else (the prompts, the panel's verdict)
passes unseen.
"""

import functools
from collections.abc import Sequence

import numpy as np

from chateval.schema.calibrated import LabelSlice, PairShare

DRAWS = 10_000
FLAG_P = 0.05
REFUSE_P = 0.001
_SEED = 2023  # fixed: one slice, one p-value
# A pair is named when its labelled count is this many standard errors from its share (the
# adjusted residual of the table's cell; about 5% of pairs pass it by chance alone).
NAMED_RESIDUAL = 2.0


def label_slice(systems: Sequence[str], a: np.ndarray, b: np.ndarray, labelled: np.ndarray) -> LabelSlice:
    """The test of the module doc: ``a[i]`` and ``b[i]`` index ``systems`` (a pair is unordered),
    ``labelled[i]`` says whether comparison i carries a human label."""
    first, second = np.minimum(a, b), np.maximum(a, b)
    keys, pair = np.unique(np.stack([first, second], axis=1), axis=0, return_inverse=True)
    pair = pair.ravel()
    comparisons = np.bincount(pair, minlength=len(keys))
    counts = np.bincount(pair, weights=labelled.astype(float), minlength=len(keys)).astype(np.int64)
    n, total = int(counts.sum()), int(comparisons.sum())
    statistic = float(_chi_square(counts, comparisons, n, total))
    null = _null_statistics(tuple(int(m) for m in comparisons), n)
    # At least as large, up to rounding: a draw with the slice's own counts must count.
    at_least = DRAWS - int(np.searchsorted(null, statistic - 1e-9 * max(1.0, statistic)))
    p_value = (1 + at_least) / (1 + DRAWS)
    flagged = p_value < FLAG_P
    return {
        "pairs": len(keys),
        "chi_square": statistic,
        "p_value": p_value,
        "draws": DRAWS,
        "random": not flagged,
        "uneven": _uneven(systems, keys, counts, comparisons, n, total) if flagged else [],
    }


@functools.lru_cache(maxsize=64)
def _null_statistics(comparisons: tuple[int, ...], n: int) -> np.ndarray:
    """The statistics of ``DRAWS`` random slices of n labels, sorted. Kept for the next slice of
    the same design and size: a rescore, or a simulation's many runs."""
    sizes = np.array(comparisons)
    draws = np.random.default_rng(_SEED).multivariate_hypergeometric(sizes, n, size=DRAWS)
    null = np.sort(_chi_square(draws, sizes, n, int(sizes.sum())))
    null.flags.writeable = False  # shared by every caller of the cache
    return null


def _chi_square(counts: np.ndarray, comparisons: np.ndarray, n: int, total: int) -> np.ndarray:
    """Pearson's chi-square of the pairs x (labelled, unlabelled) table (the last axis the
    pairs): both cells of a pair reduce to (l - e)^2 M^2 / (m n (M - n))."""
    if n in (0, total):
        return np.zeros(np.shape(counts)[:-1])
    expected = comparisons * n / total
    return np.asarray(np.sum((counts - expected) ** 2 / comparisons, axis=-1) * total**2 / (n * (total - n)))


def _uneven(
    systems: Sequence[str], keys: np.ndarray, counts: np.ndarray, comparisons: np.ndarray, n: int, total: int
) -> list[PairShare]:
    """The pairs NAMED_RESIDUAL or more adjusted standard errors from their share, most
    under-labelled first."""
    share = n / total
    expected = comparisons * share
    spread = np.sqrt(expected * (1 - share) * (1 - comparisons / total))
    residual = np.divide(counts - expected, spread, out=np.zeros(len(counts)), where=spread > 0)
    named = [k for k in np.argsort(residual, kind="stable") if abs(residual[k]) >= NAMED_RESIDUAL]
    return [
        {
            "system_a": systems[keys[k, 0]],
            "system_b": systems[keys[k, 1]],
            "labelled": int(counts[k]),
            "comparisons": int(comparisons[k]),
            "expected": float(expected[k]),
        }
        for k in named
    ]


def slice_text(found: LabelSlice, most: int = 4) -> str:
    """The test's finding in words: p, and the most uneven pairs ("b vs c: 0 of 40 labelled,
    13.3 expected")."""
    named = [
        f"{p['system_a']} vs {p['system_b']}: {p['labelled']} of {p['comparisons']} labelled, "
        f"{p['expected']:.1f} expected"
        for p in found["uneven"][:most]
    ]
    more = len(found["uneven"]) - most
    listed = "; ".join(named) + (f"; and {more} more pairs" if more > 0 else "")
    p = found["p_value"]
    said = f"p = {p:.4f}" if p >= 1e-3 else "p < 0.001"
    return (
        f"the labelled share differs across the {found['pairs']} pairs more than a random slice's "
        f"would (exact test, {said})" + (f": {listed}" if listed else "")
    )
