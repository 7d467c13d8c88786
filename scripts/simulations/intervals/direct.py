"""**direct mean** and **direct paired difference** (``direct_systems``): three systems scored
1-10 on 2 to 40 prompts, each score its system's centre plus a prompt effect shared by the
systems plus its own noise, rounded and held within 1-10: spread out (centres 4, 6, 8), or near
the top (9.5, 9.8, 8 with little noise, most scores 10). The truth is the mean over a million
prompts.
"""

import numpy as np

from chateval.evaluation.systems.direct_systems import ScoredResponse, direct_systems
from simulations.intervals.rows import Rows, summarise

# Direct scores: (each system's centre, the prompt effect's sd, the response's own sd), on 1-10.
DIRECT_SETTINGS = {
    "spread out": ((4.0, 6.0, 8.0), 1.0, 1.5),
    "near the top": ((9.5, 9.8, 8.0), 0.3, 0.7),
}


def direct_scores(
    centres: tuple[float, ...], prompt_sd: float, own_sd: float, prompts: int, rng: np.random.Generator
) -> np.ndarray:
    """Scores (prompts x systems): each centre plus the prompt's shared effect plus the
    response's own noise, rounded and held within 1-10 as a referee's score is."""
    latent = (
        np.array(centres)
        + rng.normal(0.0, prompt_sd, (prompts, 1))
        + rng.normal(0.0, own_sd, (prompts, len(centres)))
    )
    return np.clip(np.round(latent), 1, 10)


def direct_run(
    setting: str, prompts: int, truth: np.ndarray, rng: np.random.Generator
) -> tuple[list[tuple[bool, float]], list[tuple[bool, float]]]:
    """The per-system means' and the paired differences' (coverage, width) cases of one run."""
    centres, prompt_sd, own_sd = DIRECT_SETTINGS[setting]
    scores = direct_scores(centres, prompt_sd, own_sd, prompts, rng)
    names = [f"s{i}" for i in range(len(centres))]
    rows = [
        ScoredResponse(f"p{p}", name, {"overall": float(scores[p, i])})
        for p in range(prompts)
        for i, name in enumerate(names)
    ]
    found = direct_systems(rows, names, {"overall": (1, 10)})
    means = [
        (
            m["mean"]["ci95"][0] <= truth[names.index(m["system"])] <= m["mean"]["ci95"][1],
            m["mean"]["ci95"][1] - m["mean"]["ci95"][0],
        )
        for m in found["means"]
    ]
    differences = []
    for d in found["differences"]:
        assert d["difference"] is not None
        planted = truth[names.index(d["system_a"])] - truth[names.index(d["system_b"])]
        low, high = d["difference"]["ci95"]
        differences.append((low <= planted <= high, high - low))
    return means, differences


def direct_rows(reps: int, rows: Rows) -> None:
    for setting, (centres, prompt_sd, own_sd) in DIRECT_SETTINGS.items():
        truth = direct_scores(centres, prompt_sd, own_sd, 1_000_000, np.random.default_rng(23)).mean(axis=0)
        for prompts in (2, 3, 5, 10, 20, 40):
            rng = np.random.default_rng([prompts, len(setting), 11])
            runs = [direct_run(setting, prompts, truth, rng) for _ in range(reps)]
            described = f"3 systems x {prompts} prompts, 1-10 scores {setting}"
            summarise("direct mean", described, [c for run in runs for c in run[0]], rows)
            summarise("direct paired difference", described, [c for run in runs for c in run[1]], rows)
