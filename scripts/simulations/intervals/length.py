"""**length share** (``win_rates``' length bias): the four systems (``systems``), every answer
with a random length; the panel's decisions do not depend on it on average, so the longer
answer's true share of decisive comparisons is 0.5. With ``prompt effect`` each prompt has its
own length preference gamma_p ~ N(0, 1) (some prompts favour the longer answer, some the
shorter, 0 on average): the comparisons of a prompt then move together, which is what the
prompt-clustered design effect is for.
"""

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.win_rates import win_rates
from simulations.davidson import NU
from simulations.intervals.rows import Rows, summarise
from simulations.intervals.systems import PAIRS, STRENGTHS


def length_share_run(
    prompts: int, prompt_effect: bool, rng: np.random.Generator
) -> tuple[bool, float] | None:
    """Whether the longer answer's share interval holds 0.5, and its width; None: no decisive
    comparison between answers of different lengths."""
    comparisons: list[Comparison] = []
    for p in range(prompts):
        lengths = {s: int(rng.integers(20, 400)) for s in STRENGTHS}
        gamma = float(rng.normal(0.0, 1.0)) if prompt_effect else 0.0
        pairs = [(f"p{p}", a, b) for a, b in PAIRS]
        comparisons += simulate_davidson(
            STRENGTHS, NU, pairs, rng, gamma=gamma, lengths={(f"p{p}", s): n for s, n in lengths.items()}
        )
    share = win_rates(comparisons)["length_bias"]["share"]
    if share is None:
        return None
    low, high = share["ci95"]
    return low <= 0.5 <= high, high - low


def length_rows(reps: int, rows: Rows) -> None:
    for effect in (False, True):
        for prompts in (2, 4, 8, 30):
            rng = np.random.default_rng([prompts, int(effect)])
            cases = [
                c for c in (length_share_run(prompts, effect, rng) for _ in range(reps)) if c is not None
            ]
            setting = f"{prompts} prompts x 6 comparisons" + (", prompt effect" if effect else "")
            summarise("length share", setting, cases, rows)
