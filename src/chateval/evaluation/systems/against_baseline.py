"""Each system's win rate against a baseline, raw and length-controlled, as AlpacaEval 2 reports
them (``compare: {against: BASELINE}``, or any design that pairs systems with the baseline).

**Raw**: the share of its comparisons with the baseline the system won, ties half, with the win
rates' prompt-clustered interval (chateval.evaluation.systems.proportion_interval).

**Length-controlled**: AlpacaEval 2's generalised linear model, per system: the logit of its
outcome against the baseline (ties half, a fractional outcome) is ``theta + phi * x``, where
``x = tanh(d / s)``, ``d`` its answer's length in words minus the baseline's and ``s`` the
standard deviation of ``d`` over every comparison with the baseline (so ``phi`` is on one scale
for all systems). The length-controlled win rate is the model's win rate with the length term
removed, ``sigmoid(theta)``: what the system would win against the baseline if their answers
were equally long. (AlpacaEval 2 also has an instruction-difficulty term, fitted over many
models on its 805 instructions; with a handful of systems and prompts it is not identified, and
is left out.) Its 95% interval is ``sigmoid(theta -+ t * se)`` with the cluster-robust (sandwich)
standard error over prompts, each residual scaled by 1 / (1 - its leverage) (the jackknife-like
CR3 correction), and Student t on G - 2 degrees of freedom (G prompts, two parameters); below
``MIN_PROMPTS_CLUSTERED`` prompts, the model's own standard error (comparisons taken as
independent), said so. scripts/simulate_intervals.py (family ``baseline``) measures its
coverage over the intervals it shows (docs/performance.md).

**Not estimable.** A length-controlled rate is withheld (``lc_win_rate`` None, ``lc_reason``
says why) where it says nothing: from fewer than ``LC_MIN_PROMPTS`` (8) prompts; when every
answer of the system is longer than the baseline's, or every one shorter (the rate at equal
length is then an extrapolation past the data: the fit puts it wherever the logistic curve
goes, 0.998 on three prompts); or when its 95% interval is wider than
``LC_UNINFORMATIVE_WIDTH`` (0.9 of the [0, 1] scale: a rate of 0.998 [0.000, 1.000] drawn as a
bar reads as a near-certain win). Why a prompt count and not the width alone: withholding the
wide intervals leaves the narrow ones, and with few prompts a narrow sandwich interval is
mostly one whose spread came out small by chance: with the width rule alone, the intervals
shown at 5 prompts covered 80.2% and 85.9% (2,000 shown each; ``scripts/simulate_intervals.py
--only baseline --lc-min-prompts 0``), from 8 prompts on 98.3% or more. Tables, the
export and the pictures show it as not estimable, with the reason.
"""

from collections.abc import Sequence

import numpy as np
from scipy.stats import norm, t

from chateval.core.formatting import ci_text, signed_ci
from chateval.evaluation.measures import Table
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.proportion_interval import MIN_PROMPTS_CLUSTERED
from chateval.schema.agreement import Interval
from chateval.schema.systems import AgainstBaseline, BaselineRate, WinRates

RIDGE = 1e-4  # keeps theta finite when a system won (or lost) every comparison
LC_UNINFORMATIVE_WIDTH = 0.9  # a wider interval of a rate in [0, 1] says nothing (module doc)
LC_MIN_PROMPTS = 8  # fewer: the length-controlled rate is not estimable (module doc)
CLUSTERED = "prompt-clustered sandwich, t quantile"
INDEPENDENT = "model-based, assumes independent comparisons"


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton's method for the fractional logistic model; the parameters, the fitted
    probabilities and the (ridged) information matrix."""
    params = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ params)))
        gradient = x.T @ (y - p) - RIDGE * params
        information = (x * (p * (1 - p))[:, None]).T @ x + RIDGE * np.eye(x.shape[1])
        step = np.linalg.solve(information, gradient)
        params = params + step
        if np.max(np.abs(step)) < 1e-10:
            break
    p = 1 / (1 + np.exp(-(x @ params)))
    return params, p, (x * (p * (1 - p))[:, None]).T @ x + RIDGE * np.eye(x.shape[1])


def _covariance(
    x: np.ndarray, y: np.ndarray, p: np.ndarray, information: np.ndarray, prompts: np.ndarray
) -> tuple[np.ndarray, bool]:
    """The parameters' covariance, prompt-clustered (sandwich) when there are enough prompts;
    and whether it is."""
    bread = np.linalg.inv(information)
    groups, index = np.unique(prompts, return_inverse=True)
    if len(groups) < MIN_PROMPTS_CLUSTERED:
        return bread, False
    # Each residual scaled by 1 / (1 - its leverage), the jackknife-like (CR3) correction that
    # keeps a few prompts' sandwich from being too narrow (exact for one comparison a prompt).
    leverage = np.einsum("ij,jk,ik->i", x, bread, x) * p * (1 - p)
    residuals = (y - p) / np.maximum(1 - leverage, 0.05)
    scores = np.zeros((len(groups), x.shape[1]))
    np.add.at(scores, index, residuals[:, None] * x)  # each prompt's score contribution
    return bread @ (scores.T @ scores) @ bread, True


def _interval(value: float, se: float, quantile: float, transform: bool) -> Interval:
    low, high = value - quantile * se, value + quantile * se
    if transform:
        return {
            "value": float(1 / (1 + np.exp(-value))),
            "ci95": [float(1 / (1 + np.exp(-low))), float(1 / (1 + np.exp(-high)))],
        }
    return {"value": float(value), "ci95": [float(low), float(high)]}


def lc_win_rate(
    outcomes: np.ndarray, differences: np.ndarray, prompts: np.ndarray, scale: float
) -> tuple[Interval, Interval | None, bool]:
    """The length-controlled win rate (``sigmoid(theta)``), the length coefficient ``phi``
    (None without length differences) and whether the intervals are prompt-clustered."""
    lengths = np.tanh(differences / scale) if scale > 0 else np.zeros(len(outcomes))
    with_length = bool(np.any(lengths != 0))
    x = np.column_stack([np.ones(len(outcomes)), lengths]) if with_length else np.ones((len(outcomes), 1))
    params, p, information = _fit(x, outcomes)
    covariance, clustered = _covariance(x, outcomes, p, information, prompts)
    groups = len(np.unique(prompts))
    # t on G - k degrees of freedom: k parameters are fitted from G prompts.
    quantile = float(t.ppf(0.975, groups - x.shape[1])) if clustered else float(norm.ppf(0.975))
    se = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    rate = _interval(float(params[0]), float(se[0]), quantile, transform=True)
    phi = _interval(float(params[1]), float(se[1]), quantile, transform=False) if with_length else None
    return rate, phi, clustered


def lc_not_estimable(rate: Interval, differences: np.ndarray, prompts: int) -> str | None:
    """Why the length-controlled ``rate`` of a system whose answers differ from the baseline's by
    ``differences`` words on ``prompts`` prompts says nothing (the module doc), None when it is
    estimable."""
    if prompts < LC_MIN_PROMPTS:
        return f"not estimable from {prompts} prompts (it needs {LC_MIN_PROMPTS})"
    if len(differences) and (differences.min() > 0 or differences.max() < 0):
        side = "longer" if differences.min() > 0 else "shorter"
        low, high = np.abs(differences).min(), np.abs(differences).max()
        return (
            f"not estimable: every answer is {side} than the baseline's (by {low:g}-{high:g} words), "
            "so the rate at equal length lies outside the data"
        )
    low, high = rate["ci95"] or (0.0, 1.0)
    if high - low > LC_UNINFORMATIVE_WIDTH:
        return f"not estimable: {ci_text(rate)} (95% interval) spans most of [0, 1]"
    return None


def against_baseline(
    comparisons: Sequence[Comparison], baseline: str, rates: WinRates
) -> AgainstBaseline | None:
    """Every other system against ``baseline`` (module doc), its raw win rates read from
    ``rates`` (the run's ``win_rates`` of the same comparisons); None when no comparison has
    the baseline."""
    own = [c for c in comparisons if baseline in (c.system_a, c.system_b)]
    if not own:
        return None
    others = list(dict.fromkeys(c.system_b if c.system_a == baseline else c.system_a for c in own))
    pairs = {frozenset((p["system_a"], p["system_b"])): p for p in rates["pairs"]}
    # d is a system's length minus the baseline's, whichever side each comparison has it on.
    oriented = [
        (c.length_b - c.length_a) if c.system_a == baseline else (c.length_a - c.length_b) for c in own
    ]
    scale = float(np.std(np.array(oriented, dtype=float)))
    rows: list[BaselineRate] = []
    for system in others:
        mine = [c for c in own if system in (c.system_a, c.system_b)]
        first = [c.system_a == system for c in mine]
        outcomes = np.array([c.outcome if f else 1 - c.outcome for c, f in zip(mine, first, strict=True)])
        differences = np.array(
            [
                (c.length_a - c.length_b) if f else (c.length_b - c.length_a)
                for c, f in zip(mine, first, strict=True)
            ],
            dtype=float,
        )
        prompts = np.array([c.prompt for c in mine])
        rate, phi, clustered = lc_win_rate(outcomes, differences, prompts, scale)
        pair = pairs[frozenset((system, baseline))]
        flipped = pair["system_a"] != system  # the run orients each pair by first appearance
        raw = pair["win_rate"]
        if flipped:
            low, high = raw["ci95"]
            raw = {**raw, "value": 1 - raw["value"], "ci95": [1 - high, 1 - low]}
        wins, losses = (pair["losses"], pair["wins"]) if flipped else (pair["wins"], pair["losses"])
        row: BaselineRate = {
            "system": system,
            "comparisons": pair["n"],
            "prompts": pair["prompts"],
            "wins": wins,
            "ties": pair["ties"],
            "losses": losses,
            "win_rate": raw,
            "lc_win_rate": rate,
            "length_coefficient": phi,
            "interval_method": CLUSTERED if clustered else INDEPENDENT,
        }
        if reason := lc_not_estimable(rate, differences, len(set(prompts.tolist()))):
            row["lc_win_rate"] = None
            row["lc_reason"] = reason
        rows.append(row)
    out: AgainstBaseline = {"baseline": baseline, "length_scale": scale, "rows": rows}
    return out


def baseline_table(found: AgainstBaseline | None) -> Table | None:
    """Each system against the baseline, raw and length-controlled (AlpacaEval 2's figure), as
    the reports show it; None without a baseline."""
    if not found:
        return None
    rows = [
        [
            row["system"],
            str(row["comparisons"]),
            f"{row['wins']}/{row['ties']}/{row['losses']}",
            ci_text(row["win_rate"]),
            "not estimable" if "lc_reason" in row else ci_text(row["lc_win_rate"]),
            signed_ci(row["length_coefficient"]) if row["length_coefficient"] else "-",
        ]
        for row in found["rows"]
    ]
    notes = [
        f"win rate against {found['baseline']}, ties half: raw (95% prompt-clustered Wilson "
        "intervals; exact binomial under 5 prompts), and length-controlled as AlpacaEval 2 fits it: "
        "the logistic model of the outcome on tanh(length difference / "
        f"{found['length_scale']:.1f} words), its win rate with the length term removed (95% "
        "prompt-clustered sandwich intervals, t quantile); length effect: the model's coefficient "
        "(positive: longer answers win more).",
        *([f"warning: {found['warning']}."] if "warning" in found else []),
        *(
            f"{row['system']}: length-controlled {row['lc_reason']}."
            for row in found["rows"]
            if "lc_reason" in row
        ),
    ]
    headers = ["system", "n", "W/T/L", "win rate [95% CI]", "length-controlled", "length effect"]
    return Table(f"against the baseline {found['baseline']}", headers, rows, notes)
