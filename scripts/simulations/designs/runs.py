"""One simulated run of a design (planned, from data/designs.py, or adaptive) on planted
strengths: what its leaderboard and win rates recover, and whether their intervals hold.
"""

import numpy as np
from scipy.stats import kendalltau

from chateval.config.designs import CompareDesign
from chateval.data.designs import comparisons_per_prompt, design_pairs
from chateval.evaluation.systems.adaptive_design import LOOK_ALPHA
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.leaderboard import RESOLVED_ALPHA, leaderboard
from chateval.evaluation.systems.win_rates import win_rates
from simulations.davidson import NU, planted_win_rate
from simulations.designs.adaptive import ADAPTIVE, Adaptive, adaptive_comparisons
from simulations.designs.claims import false_claim, false_pair, watched


def designs(n: int) -> list[tuple[str, CompareDesign | Adaptive]]:
    """The designs compared at N systems."""
    out: list[tuple[str, CompareDesign | Adaptive]] = [("all_pairs", CompareDesign())]
    out.append(("against median", CompareDesign(against="BASELINE")))
    for k in (2, 4):
        if k < n:
            out.append((f"opponents K={k}", CompareDesign(opponents=k)))
    out += [
        (ADAPTIVE, Adaptive()),
        (f"{ADAPTIVE} top_k=1", Adaptive(1)),
        (f"{ADAPTIVE} top_k=3", Adaptive(3)),
    ]
    return out


def fixed_comparisons(
    strengths: dict[str, float], design: CompareDesign, budget: int, seed: int
) -> tuple[list[Comparison], str] | None:
    """A planned design's comparisons on as many prompts as ``budget`` buys, and its anchor."""
    systems = list(strengths)
    if design.against is not None:  # the median-strength system is the baseline
        design = CompareDesign(against=sorted(systems, key=strengths.__getitem__)[len(systems) // 2])
    prompts = budget // comparisons_per_prompt(design, len(systems))
    if prompts < 1:
        return None
    pairs = [(f"p{p}", a, b) for p in range(prompts) for a, b in design_pairs(design, systems, seed, f"p{p}")]
    return simulate_davidson(strengths, NU, pairs, np.random.default_rng(seed)), design.against or systems[0]


def one_run(
    strengths: dict[str, float], design: CompareDesign | Adaptive, budget: int, seed: int, watch: bool = False
) -> dict[str, float] | None:
    """Tau, top-1/top-3, coverage and width of one simulated run; None when the budget buys no
    prompt. ``watch`` (adaptive designs): also whether what the run shows, and what plain lists
    after every wave would show, is ever false (the stops table)."""
    systems = list(strengths)
    outcome = None
    if isinstance(design, Adaptive):
        outcome = adaptive_comparisons(strengths, design, budget, seed)
        comparisons, anchor = outcome.comparisons, systems[0]
        alpha = LOOK_ALPHA  # the final board's share of the design's 5%, as in a run
    else:
        made = fixed_comparisons(strengths, design, budget, seed)
        if made is None:
            return None
        comparisons, anchor = made
        alpha = RESOLVED_ALPHA
    board = leaderboard(comparisons, systems, anchor=anchor, resolved_alpha=alpha)
    rows = {row["system"]: row for row in board["rows"]}
    truth = {s: BASE_RATING + ELO_SCALE * (v - strengths[anchor]) for s, v in strengths.items()}
    others = [s for s in systems if s != anchor]
    tau = kendalltau([truth[s] for s in systems], [rows[s]["rating"] for s in systems]).statistic
    covered = [rows[s]["ci95"][0] <= truth[s] <= rows[s]["ci95"][1] for s in others]
    widths = [rows[s]["ci95"][1] - rows[s]["ci95"][0] for s in others]
    best = sorted(systems, key=lambda s: -strengths[s])
    fitted = [row["system"] for row in board["rows"]]
    pairs = win_rates(comparisons, systems)["pairs"]
    pair_covered = [
        pair["win_rate"]["ci95"][0]
        <= planted_win_rate(strengths, pair["system_a"], pair["system_b"])
        <= pair["win_rate"]["ci95"][1]
        for pair in pairs
    ]
    stopped: dict[str, float] = {}
    if isinstance(design, Adaptive) and outcome is not None:
        claimed = outcome.claimed
        stopped["resolved"] = float(claimed is not None)
        stopped["false_resolved"] = float(
            claimed is not None and false_claim(strengths, claimed, design.top_k)
        )
        if watch:
            stopped["false_shown"] = float(
                bool(stopped["false_resolved"]) or false_pair(strengths, board["resolved"])
            )
            stopped["false_watched"] = float(watched(strengths, outcome, anchor))
    return {
        **stopped,
        "tau": float(tau),
        "top1": float(strengths[fitted[0]] == strengths[best[0]]),  # a planted best (ties: any)
        "top3": float(set(fitted[:3]) == set(best[:3])),
        "coverage": sum(covered) / len(covered),
        "width": float(np.mean(widths)),
        "win_rate_coverage": float(np.mean(pair_covered)),
        "comparisons": len(comparisons),
        "prompts": board["prompts"],
    }
