"""Kendall's tau between a run's leaderboards and a reference order of its systems.

    .venv/bin/python scripts/leaderboard_tau.py docs/results/faireval_systems \
        gpt-4 gpt35 vicuna-13b alpaca-13b

The reference order is given best first (for FairEval's four systems: their order in Chatbot
Arena and MT-Bench). Prints the plain and the length-controlled leaderboard with their tau,
computed from the boards' ranks (equal ratings share one: tau-b counts them as ties), so that
it says what the ranked table shows.
"""

import sys
from pathlib import Path
from typing import Any

from scipy.stats import kendalltau

from chateval import load_finished_run


def main(run: Path, reference: list[str]) -> None:
    metrics = load_finished_run(run).metrics
    systems: dict[str, Any] = dict((metrics or {}).get("systems") or {})
    for board in ("leaderboard", "length_controlled"):
        if not systems.get(board):
            raise SystemExit(f"{run}/metrics.json: no {board}")
        rows = systems[board]["rows"]
        rank = {row["system"]: row["rank"] for row in rows}
        missing = sorted(set(reference) - set(rank))
        if missing:
            raise SystemExit(f"{run}/metrics.json: no {board} rating for {', '.join(missing)}")
        tau = kendalltau([reference.index(s) for s in reference], [rank[s] for s in reference])
        order = ", ".join(f"{row['rank']}. {row['system']}" for row in rows)
        print(f"{board}: {order}; Kendall's tau against the reference {tau.statistic:.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]), sys.argv[2:])
