"""**Spearman** and **Kendall** (``direct_metrics``, as a direct run's agreement): k units
(items, or groups of 6 responses as Topical-Chat's dialogues) with a latent quality x (a group
effect shared by its responses, plus each response's own); the human score is x plus noise cut
into 1-3, the panel's 0.5 x plus noise cut into 1-5 (noise sd 0.5 and 0.8; also a
``near-perfect panel``, 0.1 and 0.1, Spearman 0.91, and a ``nearer-perfect`` one, 0.05 and
0.05, Spearman 0.95; and over single items a ``panel scoring 10% at random``, 0.05 and 0.05 but
a uniform draw from 1-5 on 10% of the responses, Spearman 0.82). The truth is each rank
correlation over 240,000 responses of the same design; cases where a side came out constant
(undefined, no interval) are left out of the row.
"""

import numpy as np

from chateval.evaluation.agreement.metrics import direct_metrics
from simulations.intervals.rows import Rows, summarise

# panel -> (the human scores' noise, the panel's, the share of responses it scores at random,
# the responses per unit simulated): a typical panel, and panels that rank almost as the humans
# do, where a small sample often ranks perfectly though the population does not and the
# interval's floors matter (a perfect ranking counted in groups, ``misranked_bounds``)
CORRELATION_PANELS: dict[str, tuple[float, float, float, tuple[int, ...]]] = {
    "": (0.5, 0.8, 0.0, (1, 6)),
    ", near-perfect panel": (0.1, 0.1, 0.0, (1, 6)),
    ", nearer-perfect panel": (0.05, 0.05, 0.0, (1, 6)),
    ", panel scoring 10% at random": (0.05, 0.05, 0.1, (1,)),
}


def scored_responses(
    units: int,
    per_unit: int,
    rng: np.random.Generator,
    noises: tuple[float, ...] = (0.8,),
    human_noise: float = 0.5,
    random_share: float = 0.0,
) -> tuple[np.ndarray, list[np.ndarray], list[str]]:
    """Human scores (1-3), a panel's (1-5) per noise level in ``noises`` (drawn in that order,
    on the same responses; each scoring a ``random_share`` of them uniformly at random) and
    each response's group, of ``units`` groups of ``per_unit`` responses (the module doc)."""
    rows = units * per_unit
    quality = np.repeat(rng.normal(0.0, 0.8, units), per_unit) + rng.normal(0.0, 1.0, rows)
    human = np.digitize(quality + rng.normal(0.0, human_noise, rows), [-0.8, 0.8]) + 1.0
    cuts = [-1.2, -0.4, 0.4, 1.2]
    panels = [np.digitize(0.5 * quality + rng.normal(0.0, sd, rows), cuts) + 1.0 for sd in noises]
    if random_share:  # drawn only then, so the other panels' rows rerun digit for digit
        panels = [np.where(rng.random(rows) < random_share, rng.integers(1, 6, rows), p) for p in panels]
    return human, panels, [f"g{g}" for g in np.repeat(np.arange(units), per_unit)]


def planted_correlations(
    per_unit: int, noises: tuple[float, float] = (0.5, 0.8), random_share: float = 0.0
) -> tuple[float, float]:
    """Spearman and Kendall tau-b of the design over 240,000 responses, with the human and
    panel ``noises`` and the panel's ``random_share``."""
    from scipy.stats import kendalltau, spearmanr

    human_noise, panel_noise = noises
    rng = np.random.default_rng(per_unit)
    units = 240_000 // per_unit
    human, (panel,), _ = scored_responses(units, per_unit, rng, (panel_noise,), human_noise, random_share)
    return float(spearmanr(human, panel).statistic), float(kendalltau(human, panel).statistic)


def correlation_run(
    units: int,
    per_unit: int,
    truth: tuple[float, float],
    seed: int,
    rng: np.random.Generator,
    noises: tuple[float, float] = (0.5, 0.8),
    random_share: float = 0.0,
) -> list[tuple[bool, float]] | None:
    """Whether Spearman's and Kendall's intervals hold the truth, and their widths; None when
    either has no interval."""
    human_noise, panel_noise = noises
    scored_rows = scored_responses(units, per_unit, rng, (panel_noise,), human_noise, random_share)
    human, (panel,), groups = scored_rows
    grouping = {"score": groups} if per_unit > 1 else None
    scored = direct_metrics({"score": list(human)}, {"score": list(panel)}, seed, grouping)
    out = []
    for name, planted in zip(("spearman", "kendall"), truth, strict=True):
        ci = scored["dimensions"]["score"][name]["ci95"]  # type: ignore[literal-required]
        if ci is None:
            return None
        out.append((ci[0] <= planted <= ci[1], ci[1] - ci[0]))
    return out


def correlation_rows(reps: int, rows: Rows) -> None:
    for panel, (human_noise, panel_noise, share, sizes) in CORRELATION_PANELS.items():
        noises = (human_noise, panel_noise)
        for per_unit in sizes:
            truth = planted_correlations(per_unit, noises, share)
            for units in (6, 10, 20, 40):
                # the first panel's seeds as before, so its rows rerun digit for digit
                rng = np.random.default_rng([units, per_unit] + ([len(panel)] if panel else []))
                found = [
                    correlation_run(units, per_unit, truth, seed, rng, noises, share) for seed in range(reps)
                ]
                kept = [case for case in found if case is not None]
                setting = f"{units} groups x {per_unit} responses" if per_unit > 1 else f"{units} items"
                for k, statistic in enumerate(("Spearman", "Kendall")):
                    summarise(statistic, setting + panel, [case[k] for case in kept], rows)
