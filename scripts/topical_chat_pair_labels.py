"""Pairwise human labels for Topical-Chat's six response systems, from its human scores.

Topical-Chat (UniEval's ``topical_chat.json``) gives six systems' responses to each of 60
dialogues, each with human scores; this writes one row per dialogue and pair of systems, the
label saying which response the humans scored higher on ``--dimension`` (``overall`` by
default; equal scores: tie). With ``configs/topical_chat_systems.yaml`` the responses and these
labels make a systems run with labels on every comparison, of which ``data.label_fraction``
keeps a seeded random share: a calibrated leaderboard with known truth. The data stays where
it lives; the CSV goes where ``--out`` says (not into the repository).

    python scripts/topical_chat_pair_labels.py ../shared/datasets/topical_chat/topical_chat.json \
        --out runs/topical_chat_pair_labels.csv
"""

import argparse
import ast
import csv
import itertools
import json
from pathlib import Path


def scores(record: dict[str, object]) -> dict[str, float]:
    """A record's human scores (UniEval stores them as a Python dict literal in a string)."""
    raw = record["scores"]
    parsed = ast.literal_eval(raw) if isinstance(raw, str) else raw
    return {str(k): float(v) for k, v in dict(parsed).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="topical_chat.json")
    parser.add_argument("--out", type=Path, required=True, help="the labels CSV to write")
    parser.add_argument("--dimension", default="overall", help="the human score compared (default overall)")
    parser.add_argument(
        "--field-win-rates",
        type=int,
        metavar="N",
        help="also print each system's human win rate against the field over the first N dialogues "
        "(ties half): the truth a calibrated leaderboard on those dialogues estimates",
    )
    args = parser.parse_args()
    records = json.loads(args.data.read_text(encoding="utf-8"))
    by_dialogue: dict[str, list[dict[str, object]]] = {}
    for record in records:
        by_dialogue.setdefault(str(record["source"]), []).append(record)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = 0
    with args.out.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["source", "system_a", "system_b", "label"])
        for dialogue, responses in by_dialogue.items():
            for a, b in itertools.combinations(responses, 2):
                score_a, score_b = scores(a)[args.dimension], scores(b)[args.dimension]
                label = "A" if score_a > score_b else "B" if score_b > score_a else "tie"
                writer.writerow([dialogue, a["system_id"], b["system_id"], label])
                rows += 1
    print(f"wrote {rows} labels of {len(by_dialogue)} dialogues to {args.out}")
    if args.field_win_rates:
        dialogues = list(by_dialogue.values())[: args.field_win_rates]
        print_field_win_rates(dialogues, args.dimension)


def print_field_win_rates(dialogues: list[list[dict[str, object]]], dimension: str) -> None:
    """Each system's share of its comparisons won on the human score (ties half)."""
    won: dict[str, float] = {}
    played: dict[str, int] = {}
    for responses in dialogues:
        for a, b in itertools.combinations(responses, 2):
            score_a, score_b = scores(a)[dimension], scores(b)[dimension]
            share_a = 1.0 if score_a > score_b else 0.0 if score_b > score_a else 0.5
            for system, share in ((str(a["system_id"]), share_a), (str(b["system_id"]), 1.0 - share_a)):
                won[system] = won.get(system, 0.0) + share
                played[system] = played.get(system, 0) + 1
    for system in sorted(won, key=lambda s: -won[s] / played[s]):
        print(f"{system}: {won[system] / played[system]:.3f} of {played[system]} comparisons")


if __name__ == "__main__":
    main()
