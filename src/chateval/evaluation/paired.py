"""Two runs on the items both judged: is the gap between them more than noise?

The paper's gaps between configurations are 2 to 5 items of 80, so two runs' separate
confidence intervals overlap almost always and say little. Paired statistics use the fact that
both runs judged the same items:

- **paired bootstrap**: resample the shared items (whole groups where items come in groups,
  e.g. Topical-Chat dialogues), compute each run's metric on the same resample and keep the
  difference (run B minus run A); the interval is its 2.5th-97.5th percentile. An interval
  that excludes 0 is a gap the data supports.
- **exact McNemar test** for pairwise accuracy: only items that exactly one run got right
  carry information about which run is more accurate; under "equally accurate" each of them
  is a fair coin, so the two-sided binomial test on those discordant items gives the p-value.

A correlation that is undefined (a constant prediction, see chateval.evaluation.metrics) has no
difference: its value is null with the reason, resamples where either side is undefined are
counted and left out of the difference's interval, and averages leave such dimensions out.
The same comparison serves a run against itself before discussion (``names``: blind, final).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chateval.evaluation.metrics import (
    CORRELATION_DIMENSIONS,
    bootstrap,
    correlation_interval,
    correlation_or_nan,
    interval,
    kappa_from_codes,
    label_codes,
    undefined_reason,
)


def mcnemar_exact(a_only_right: int, b_only_right: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts (1.0 when there are none)."""
    from scipy.stats import binomtest

    discordant = a_only_right + b_only_right
    if discordant == 0:
        return 1.0
    return float(binomtest(a_only_right, discordant, 0.5).pvalue)


def compare_pairwise(
    truth: Sequence[str],
    labels_a: Sequence[str],
    labels_b: Sequence[str],
    seed: int = 0,
    names: tuple[str, str] = ("a", "b"),
) -> dict[str, Any]:
    """Accuracy and kappa of two runs' labels on the same items, their paired differences
    (B - A) with bootstrap intervals, and the exact McNemar test on accuracy. ``names`` name
    the two sides in the result (``a``, ``b``, ``a_only_right`` ...)."""
    t, a, b = label_codes(truth), label_codes(labels_a), label_codes(labels_b)

    def statistic(idx: np.ndarray) -> tuple[float, float, float, float]:
        ti, ai, bi = t[idx], a[idx], b[idx]
        acc_a, acc_b = float(np.mean(ai == ti)), float(np.mean(bi == ti))
        return acc_a, acc_b, kappa_from_codes(ti, ai), kappa_from_codes(ti, bi)

    (acc_a, acc_b, kappa_a, kappa_b), reps = bootstrap(len(t), statistic, seed)
    diffs = (reps[:, [1, 3]] - reps[:, [0, 2]]) if len(reps) else np.empty((0, 2))
    a_only = int(np.sum((a == t) & (b != t)))
    b_only = int(np.sum((b == t) & (a != t)))
    first, second = names
    return {
        "n": len(t),
        "accuracy": {first: acc_a, second: acc_b, "difference": interval(acc_b - acc_a, diffs[:, 0])},
        "kappa": {first: kappa_a, second: kappa_b, "difference": interval(kappa_b - kappa_a, diffs[:, 1])},
        "mcnemar": {
            f"{first}_only_right": a_only,
            f"{second}_only_right": b_only,
            "p_value": mcnemar_exact(a_only, b_only),
        },
    }


def compare_direct(
    truth: Mapping[str, Sequence[float]],
    scores_a: Mapping[str, Sequence[float]],
    scores_b: Mapping[str, Sequence[float]],
    seed: int = 0,
    groups: Sequence[str] | None = None,
    names: tuple[str, str] = ("a", "b"),
) -> dict[str, Any]:
    """Spearman and Kendall of two runs per dimension and on average, with paired bootstrap
    intervals of the differences (B - A). Every dimension must cover the same items (in the
    same order); ``groups`` names each item's group for a cluster bootstrap; ``names`` name
    the two sides in the result. An undefined correlation is null (``*_undefined`` gives the
    reason) and so is its difference; the average is over the dimensions defined for both."""
    dims = list(truth)
    n = len(truth[dims[0]]) if dims else 0
    if any(len(truth[d]) != n or len(scores_a[d]) != n or len(scores_b[d]) != n for d in dims):
        raise ValueError("every dimension must be scored on the same items by both runs")
    arrays = {d: tuple(np.asarray(x[d], dtype=float) for x in (truth, scores_a, scores_b)) for d in dims}

    def statistic(idx: np.ndarray) -> np.ndarray:
        rows = []
        for d in dims:
            t, a, b = (x[idx] for x in arrays[d])
            rows.append([*correlation_or_nan(t, a), *correlation_or_nan(t, b)])
        return np.asarray(rows)  # per dimension: rho_a, tau_a, rho_b, tau_b (NaN: undefined)

    value, reps = bootstrap(n, statistic, seed, groups)
    averaged = [i for i, d in enumerate(dims) if d in CORRELATION_DIMENSIONS] or list(range(len(dims)))
    out: dict[str, Any] = {"n": n, "resampled": f"{len(set(groups))} groups" if groups else "items"}
    first, second = names
    reasons = {
        d: (undefined_reason(arrays[d][0], arrays[d][1]), undefined_reason(arrays[d][0], arrays[d][2]))
        for d in dims
    }

    Reasons = tuple[str | None, str | None]  # why side a's and side b's correlation is undefined

    def undefined_text(whys: Reasons) -> str:
        return "; ".join(f"{side}: {why}" for side, why in zip(names, whys, strict=True) if why)

    def entry(rows: np.ndarray, replicates: np.ndarray, whys: Reasons) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for name, col in (("spearman", 0), ("kendall", 1)):
            a, b = float(rows[col]), float(rows[col + 2])
            diff = replicates[:, col + 2] - replicates[:, col] if len(replicates) else np.empty(0)
            found = {first: None if whys[0] else a, second: None if whys[1] else b}
            undefined = undefined_text(whys)
            difference = None if undefined else b - a
            result[name] = found | {"difference": correlation_interval(difference, diff, undefined)}
        return result

    empty = np.empty((0, 4))
    out["dimensions"] = {
        d: entry(value[i], reps[:, i] if len(reps) else empty, reasons[d]) for i, d in enumerate(dims)
    }
    kept = [i for i in averaged if not any(reasons[dims[i]])]
    if dims:
        average: dict[str, Any] = {"dimensions": [dims[i] for i in kept]}
        left_out = {dims[i]: undefined_text(reasons[dims[i]]) for i in averaged if i not in kept}
        if left_out:
            average["left_out"] = left_out
        if kept:
            # A resample where a kept dimension is undefined is undefined for the mean (NaN).
            mean_reps = reps[:, kept].mean(axis=1) if len(reps) else np.empty((0, 4))
            average |= entry(value[kept].mean(axis=0), mean_reps, (None, None))
        out["average"] = average
    return out


def compare_records(
    task: str, records_a: Sequence[Mapping[str, Any]], records_b: Sequence[Mapping[str, Any]], seed: int = 0
) -> dict[str, Any] | None:
    """Compare two runs' verdict records (verdicts.jsonl) on the items both scored and humans
    labelled; None when they share none."""
    by_id = {r["item_id"]: r for r in records_a}
    if task == "pairwise":
        shared = [
            (by_id[r["item_id"]], r)
            for r in records_b
            if r["item_id"] in by_id
            and r.get("human_label") is not None
            and r.get("label") is not None
            and by_id[r["item_id"]].get("label") is not None
        ]
        if not shared:
            return None
        return compare_pairwise(
            [b["human_label"] for _, b in shared],
            [a["label"] for a, _ in shared],
            [b["label"] for _, b in shared],
            seed,
        )
    pairs = [
        (by_id[r["item_id"]], r)
        for r in records_b
        if r["item_id"] in by_id
        and r.get("human_scores")
        and r.get("scores")
        and by_id[r["item_id"]].get("scores")
    ]
    dims = [
        d
        for d in (pairs[0][1]["human_scores"] if pairs else {})
        if all(d in a["scores"] and d in b["scores"] and d in b["human_scores"] for a, b in pairs)
    ]
    if not pairs or not dims:
        return None
    grouped = all("group" in b for _, b in pairs)
    return compare_direct(
        {d: [b["human_scores"][d] for _, b in pairs] for d in dims},
        {d: [a["scores"][d] for a, _ in pairs] for d in dims},
        {d: [b["scores"][d] for _, b in pairs] for d in dims},
        seed,
        [b["group"] for _, b in pairs] if grouped else None,
    )
