"""Print docs/results' FairEval comparison table from finished pairwise run folders.

    .venv/bin/python scripts/results_table.py docs/results/faireval_chateval \
        docs/results/faireval_chateval_nudged docs/results/faireval_single

One column per run, one row per figure, every figure read from the run's metrics.json and
run.json (so the table is the runs' own numbers, nothing typed by hand), through chateval's
public API (``load_finished_run``: today's types, whichever release wrote the folder).
"""

import sys
from pathlib import Path
from typing import Any

from chateval import load_finished_run


def interval(block: dict[str, Any] | None) -> str:
    if not block or block.get("value") is None:
        return "-"
    low, high = block.get("ci95") or (None, None)
    text = f"{block['value']:.3f}"
    return text + (f" [{low:.3f}, {high:.3f}]" if low is not None else "")


def share(part: int | None, whole: int | None) -> str:
    if part is None or not whole:
        return "-"
    return f"{part} of {whole} ({100 * part / whole:.0f}%)"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def column(folder: Path) -> dict[str, str]:
    run = load_finished_run(folder)
    if run.metrics is None:
        raise SystemExit(f"{folder}: no metrics.json; `chateval rescore {folder}` writes it")
    metrics: dict[str, Any] = dict(run.metrics)
    info = run.info
    panel, soft = metrics["panel"], (metrics.get("aggregations") or {}).get("soft") or {}
    counts = panel["label_counts"]["predicted"]
    parroting = metrics.get("parroting") or {}
    cut = metrics.get("cut_off") or {}
    empty = metrics.get("empty_assessments") or {}
    ceiling = metrics.get("ceiling") or {}
    effect = (metrics.get("debate_effect") or {}).get("comparison")
    position = metrics.get("position") or {}
    copy = "-"
    if parroting.get("verdicts_that_saw_one"):
        copy = (
            f"{percent(parroting.get('copy_share'))} of {parroting['verdicts_that_saw_one']} "
            f"(blind {percent(parroting.get('copy_chance'))}, "
            f"another item {percent(parroting.get('copy_permutation_chance'))})"
        )
    return {
        "accuracy, hard [95% CI]": interval(panel["accuracy"]),
        "Cohen's kappa, hard [95% CI]": interval(panel["kappa"]),
        "accuracy, soft [95% CI]": interval((soft.get("panel") or {}).get("accuracy")),
        "predicted A / B / tie (hard)": " / ".join(str(counts.get(k, 0)) for k in ("A", "B", "tie")),
        "items tied in both orders": share(
            position.get("tie_in_both_orders"), position.get("items_in_both_orders")
        ),
        "verdicts with every score at the top": share(ceiling.get("at_top"), ceiling.get("verdicts")),
        "verdicts equal to one seen (chance)": copy,
        "utterances copying 8+ words of another referee's": percent(parroting.get("words_copy_share")),
        "utterances reciting 8+ words of the item": percent(parroting.get("recitation_share")),
        "assessments cut off at the cap": share(
            (cut.get("assessment") or {}).get("cut"), (cut.get("assessment") or {}).get("utterances")
        ),
        "empty assessments": share(empty.get("empty"), empty.get("assessments")),
        "blind vote vs final (opinion probes)": "-"
        if not effect
        else (
            f"{effect['accuracy']['blind']:.3f} -> {effect['accuracy']['final']:.3f}, "
            f"McNemar p = {effect['mcnemar']['p_value']:.2f}"
        ),
        "verdict parse failures": str(info["verdict_parse_failures"]),
        "requests / generated tokens": f"{info['requests']} / {info['generated_tokens']:,}",
        "debate seconds": f"{info['debate_seconds']:,.0f}",
    }


def main(folders: list[str]) -> None:
    columns = {Path(f).name: column(Path(f)) for f in folders}
    print("| | " + " | ".join(columns) + " |")
    print("| --- " * (len(columns) + 1) + "|")
    for row in next(iter(columns.values())):
        print(f"| {row} | " + " | ".join(c[row] for c in columns.values()) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
