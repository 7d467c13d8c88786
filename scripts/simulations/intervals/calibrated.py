"""The calibrated estimates, from the panel's verdicts and a labelled share of human outcomes, on
the four systems (``systems``):

- **calibrated pair** (``ppi_mean`` with bounds [0, 1], as a run's per-pair calibrated win
  rates): 40 comparisons of one pair, of which n carry a human label; the human outcome is drawn
  from the model (the truth is the pair's planted win rate, P(win) + P(tie) / 2), the panel's
  verdict equals it with probability ``agreement`` and is otherwise an independent draw from a
  panel that sees the systems as equal.
- **calibrated field win rates** (``calibrated_leaderboard``): all pairs on 40 prompts (240
  comparisons), a seeded random share of them labelled (runs until a row has its cases: a
  refused run adds none); the truth is each system's mean planted win rate against the other
  three.
- **calibrated ratings** (``calibrated_leaderboard``'s Bradley-Terry ratings, with their prior
  of one tie per system against the anchor): the four systems on 40 prompts with 10 to 200
  labels, and three systems on 20 prompts (60 comparisons) of which one is far behind (log-
  strengths 0, -0.2, -2.0: with 10 labels it often loses every labelled comparison, where an
  unpenalised fit has no finite rating), and the four systems again before a panel partial to
  the worst one (``FAVOURS_D``). The panel copies the human outcome 80% of the time or never;
  otherwise it judges the systems as equal (or, partial, as if d were far the best). The truth
  is what the ratings estimate: the logistic fit (ties half) to each
  comparison's expected outcome under the planted model; a row counts every non-anchor
  system's interval, and names the runs whose leaderboard was refused (a system with fewer
  than 2 labelled comparisons, or a slice the test of ``label_slice`` puts at p < 0.001).
- both calibrated families also with a panel that abstains (``ABSTAINS``: every verdict failed,
  on 60% of the comparisons the humans tie and 22.5% of the others, about 30% in all): those
  comparisons reach the leaderboard as a run writes them, undecided, the panel's prediction a
  tie. Every calibrated row counts the runs whose labelled slice, random by construction,
  ``label_slice`` flagged as not random (p < 0.05): its false alarms.
"""

import itertools

import numpy as np

from chateval.evaluation.systems.calibrated_leaderboard import calibrated_leaderboard
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.evaluation.systems.ppi_bradley_terry import bradley_terry_design, classical_logistic
from chateval.schema.calibrated import CalibratedLeaderboard
from simulations.davidson import NU, planted_win_rate
from simulations.intervals.rows import Rows, summarise
from simulations.intervals.systems import EQUAL, PAIRS, STRENGTHS


def panel_copy(human: list[Comparison], agreement: float, rng: np.random.Generator) -> list[float]:
    """The panel's outcome for each comparison: the human one with probability ``agreement``,
    else an independent draw from a panel that sees the systems as equal."""
    guesses = simulate_davidson(EQUAL, NU, [(c.prompt, c.system_a, c.system_b) for c in human], rng)
    keep = rng.random(len(human)) < agreement
    return [h.outcome if k else g.outcome for h, g, k in zip(human, guesses, keep, strict=True)]


def calibrated_pair_run(labels: int, agreement: float, rng: np.random.Generator) -> tuple[bool, float]:
    """Whether one pair's calibrated win rate interval holds the planted win rate, and its width."""
    human = simulate_davidson(STRENGTHS, NU, [(f"p{p}", "a", "b") for p in range(40)], rng)
    panel = panel_copy(human, agreement, rng)
    labelled = rng.permutation(40) < labels
    estimate = ppi_mean(
        [h.outcome for h, lab in zip(human, labelled, strict=True) if lab],
        [v for v, lab in zip(panel, labelled, strict=True) if lab],
        [v for v, lab in zip(panel, labelled, strict=True) if not lab],
        bounds=(0.0, 1.0),
    )
    low, high = estimate["ci"]
    return low <= planted_win_rate(STRENGTHS, "a", "b") <= high, high - low


# A panel that abstains (every verdict failed: ``undecided``), more often where the humans tie:
# on 60% of those and 22.5% of the others, about 30% of the comparisons in all.
ABSTAINS = {"tie": 0.6, "decisive": 0.225}


def abstentions(human: list[Comparison], abstains: bool, rng: np.random.Generator) -> np.ndarray:
    """Which comparisons the panel leaves undecided (``ABSTAINS``); none, and no draw, without
    ``abstains``, so that the rows of a panel that always decides keep their numbers."""
    if not abstains:
        return np.zeros(len(human), dtype=bool)
    chance = np.array([ABSTAINS["tie" if h.outcome == 0.5 else "decisive"] for h in human])
    return np.asarray(rng.random(len(human)) < chance)


CalibratedRun = tuple[list[tuple[bool, float]] | None, bool]  # the cases (None: refused), slice flagged


def calibrated_board(
    human: list[Comparison], panel: list[float], labelled: np.ndarray, undecided: np.ndarray, anchor: str
) -> tuple[CalibratedLeaderboard | None, bool]:
    """The calibrated leaderboard of a simulated run (None: refused) and whether its labelled
    slice was flagged as not random (refused for it, or ``label_slice`` not random). An undecided
    comparison reaches it as a run writes it: a tie, marked undecided."""
    comparisons = [
        Comparison(h.prompt, h.system_a, h.system_b, 0.5 if skip else v, None, 0, 0)
        for h, v, skip in zip(human, panel, undecided, strict=True)
    ]
    outcomes = [h.outcome if lab else None for h, lab in zip(human, labelled, strict=True)]
    try:
        board = calibrated_leaderboard(
            comparisons, outcomes, anchor=anchor, soft=False, undecided=list(undecided)
        )
    except ValueError as exc:  # too few labels for some system, or a slice beyond chance
        return None, "not a random slice" in str(exc)
    return board, not board["label_slice"]["random"]


def field_run(fraction: float, agreement: float, abstains: bool, rng: np.random.Generator) -> CalibratedRun:
    """Each system's calibrated field win rate: whether its interval holds the truth, its width."""
    pairs = [(f"p{p}", a, b) for p in range(40) for a, b in PAIRS]
    human = simulate_davidson(STRENGTHS, NU, pairs, rng)
    panel = panel_copy(human, agreement, rng)
    labelled = rng.random(len(human)) < fraction
    board, flagged = calibrated_board(human, panel, labelled, abstentions(human, abstains, rng), "a")
    if board is None:
        return None, flagged
    out = []
    for row in board["rows"]:
        field = row["field"]
        if field is None:
            continue
        truth = float(
            np.mean([planted_win_rate(STRENGTHS, row["system"], o) for o in STRENGTHS if o != row["system"]])
        )
        low, high = field["ci"]
        out.append((low <= truth <= high, high - low))
    return out, flagged


ONE_FAR_BEHIND = {"a": 0.0, "b": -0.2, "c": -2.0}  # c loses most of its labelled comparisons


def planted_ratings(strengths: dict[str, float], pairs: list[tuple[str, str, str]]) -> dict[str, float]:
    """What the calibrated ratings estimate: the logistic Bradley-Terry fit (ties half) to each
    comparison's expected outcome under the planted Davidson model, on the design's pairs."""
    names = list(strengths)
    a = np.array([names.index(p[1]) for p in pairs])
    b = np.array([names.index(p[2]) for p in pairs])
    expected = [planted_win_rate(strengths, first, second) for _, first, second in pairs]
    theta = classical_logistic(bradley_terry_design(a, b, len(names), 0), np.array(expected)).theta
    return dict(zip(names[1:], BASE_RATING + ELO_SCALE * theta, strict=True))


# A panel that favours the worst system: where it does not copy the human outcome, it judges
# as if d were the best (a judge partial to one system's style, say).
FAVOURS_D = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1.5}


def rating_run(
    strengths: dict[str, float],
    prompts: int,
    labels: int,
    agreement: float,
    rng: np.random.Generator,
    panel_sees: dict[str, float] | None = None,
    abstains: bool = False,
) -> CalibratedRun:
    """Each non-anchor system's calibrated rating: whether its interval holds the planted one,
    and its width (None when the leaderboard is refused), and whether the slice was flagged.
    Where the panel does not copy the human outcome it judges by ``panel_sees`` (default: every
    system equal); with ``abstains`` it leaves some comparisons undecided (``ABSTAINS``)."""
    names = list(strengths)
    pairs = [(f"p{p}", a, b) for p in range(prompts) for a, b in itertools.combinations(names, 2)]
    human = simulate_davidson(strengths, NU, pairs, rng)
    guesses = simulate_davidson(panel_sees or dict.fromkeys(names, 0.0), NU, pairs, rng)
    keep = rng.random(len(human)) < agreement
    panel = [h.outcome if k else g.outcome for h, g, k in zip(human, guesses, keep, strict=True)]
    labelled = np.zeros(len(human), dtype=bool)
    labelled[rng.choice(len(human), labels, replace=False)] = True
    board, flagged = calibrated_board(human, panel, labelled, abstentions(human, abstains, rng), names[0])
    if board is None:
        return None, flagged
    truth = planted_ratings(strengths, pairs)
    out = []
    for row in board["rows"]:
        if row["system"] != names[0]:
            low, high = row["ci95"]
            out.append((low <= truth[row["system"]] <= high, high - low))
    return out, flagged


def calibrated_pair_rows(reps: int, rows: Rows) -> None:
    for agreement in (0.8, 0.0):
        for labels in (3, 5, 10, 30):
            rng = np.random.default_rng([labels, int(10 * agreement)])
            cases = [calibrated_pair_run(labels, agreement, rng) for _ in range(reps)]
            summarise(
                "calibrated pair", f"{labels} of 40 labelled, panel agrees {agreement:.0%}", cases, rows
            )


def refused_and_flagged(runs: list[CalibratedRun]) -> str:
    """How many runs' leaderboards were refused and how many labelled slices (random, all of
    them) the slice test flagged as not random: its false alarms."""
    refused = sum(cases is None for cases, _ in runs)
    flagged = sum(flag for _, flag in runs)
    return f" ({refused} refused; {flagged} of {len(runs)} random slices flagged)"


def field_rows(reps: int, rows: Rows) -> None:
    for agreement, abstains in ((0.8, False), (0.0, False), (0.8, True)):
        for fraction in (0.1, 0.25):
            rng = np.random.default_rng(
                [int(100 * fraction), int(10 * agreement)] + ([2] if abstains else [])
            )
            # Runs until the row has ``reps`` cases (4 a run): a refused run adds none.
            runs: list[CalibratedRun] = []
            cases: list[tuple[bool, float]] = []
            while len(cases) < reps:
                runs.append(field_run(fraction, agreement, abstains, rng))
                cases += runs[-1][0] or []
            setting = f"{fraction:.0%} of 240 labelled, panel agrees {agreement:.0%}" + (
                ", abstains on ~30%" if abstains else ""
            )
            summarise("calibrated field win rate", setting + refused_and_flagged(runs), cases, rows)


def rating_rows(reps: int, rows: Rows) -> None:
    designs: list[tuple[dict[str, float], int, tuple[int, ...], str, dict[str, float] | None, bool]] = [
        (STRENGTHS, 40, (10, 40, 200), "4 systems x 40 prompts", None, False),
        (ONE_FAR_BEHIND, 20, (10, 20, 40), "3 systems x 20 prompts, one far behind", None, False),
        (STRENGTHS, 40, (10, 40, 200), "4 systems x 40 prompts, panel favours d", FAVOURS_D, False),
        (STRENGTHS, 40, (10, 40), "4 systems x 40 prompts, panel abstains on ~30%", None, True),
    ]
    for strengths, prompts, label_counts, described, panel_sees, abstains in designs:
        for agreement in (0.8, 0.0):
            for labels in label_counts:
                seed = [labels, int(10 * agreement), len(strengths)] + ([1] if panel_sees else [])
                rng = np.random.default_rng(seed + ([2] if abstains else []))
                runs = [
                    rating_run(strengths, prompts, labels, agreement, rng, panel_sees, abstains)
                    for _ in range(reps)
                ]
                cases = [c for found, _ in runs for c in found or []]
                setting = f"{described}, {labels} labelled, panel agrees {agreement:.0%}"
                summarise("calibrated rating", setting + refused_and_flagged(runs), cases, rows)
