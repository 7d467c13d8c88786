"""How well does a few items' `sequential` predict the whole loop? Checked on a full run.

`chateval bench --sequential-items N` times the sequential loop on N items and prices the whole
workload from them. This script takes a bench report whose `sequential` ran on EVERY item (no
--sequential-items), pretends only N of them were measured, and compares each estimate with
the measured total:
- first N items, scaled by requests (the bench's rule before the cost model);
- N items spread over the data, scaled by requests;
- N items spread over the data, priced per request by the cost model (the bench's rule now).
The bench prices the scheduled run's requests (their computed prompt tokens and answers), so
the script also prints both runs' token counts: the swap is sound only where they agree.
It also takes every N-item subset of the items and reports how far each rule lands from the
measured total (mean, 90th percentile and largest |error|), so one lucky subset proves nothing.

    .venv/bin/chateval bench configs/bench/faireval_3x2.yaml --set data.limit=16 -o full.json
    .venv/bin/python scripts/check_sequential_estimate.py full.json --items 2 --items 4
"""

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np

from chateval.bench.request_cost import TimedRequest, fit_per_model, price, spread_indices

Rows = list[tuple[str, TimedRequest]]


def rows_by_item(report: dict[str, Any]) -> dict[str, Rows]:
    sequential = next(m for m in report["modes"] if m["mode"] == "sequential")
    if "measured_items" in sequential:
        raise SystemExit("this report's sequential ran on a subset; run the bench without --sequential-items")
    by_item: dict[str, Rows] = {}
    for item, model, prompt, generated, seconds in sequential["timed_requests"]:
        by_item.setdefault(item, []).append((model, TimedRequest(prompt, generated, seconds)))
    return by_item


def seconds(rows: Rows) -> float:
    return sum(r.seconds for _, r in rows)


def scaled_by_requests(measured: Rows, everything: Rows) -> float:
    return seconds(measured) * len(everything) / len(measured)


def cost_model(measured: Rows, everything: Rows) -> float:
    return price(fit_per_model(measured), everything)


def estimates(by_item: dict[str, Rows], count: int) -> dict[str, float]:
    items = list(by_item)
    everything = [row for item in items for row in by_item[item]]

    def rows(chosen: list[str]) -> Rows:
        return [row for item in chosen for row in by_item[item]]

    spread = rows([items[i] for i in spread_indices(len(items), count)])
    return {
        "first_items_scaled_by_requests": scaled_by_requests(rows(items[:count]), everything),
        "spread_items_scaled_by_requests": scaled_by_requests(spread, everything),
        "spread_items_cost_model": cost_model(spread, everything),
    }


def every_subset(by_item: dict[str, Rows], count: int, truth: float) -> dict[str, dict[str, float]]:
    """|error| of both rules over every subset of ``count`` items: mean, 90th percentile, max."""
    everything = [row for rows in by_item.values() for row in rows]
    errors: dict[str, list[float]] = {"scaled_by_requests": [], "cost_model": []}
    for chosen in itertools.combinations(by_item, count):
        measured = [row for item in chosen for row in by_item[item]]
        errors["scaled_by_requests"].append(scaled_by_requests(measured, everything) / truth - 1)
        errors["cost_model"].append(cost_model(measured, everything) / truth - 1)
    summary = {}
    for rule, values in errors.items():
        size = np.abs(values)
        summary[rule] = {
            "subsets": len(values),
            "mean_abs_error": round(float(size.mean()), 4),
            "p90_abs_error": round(float(np.percentile(size, 90)), 4),
            "max_abs_error": round(float(size.max()), 4),
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a chateval bench JSON with a full sequential run")
    parser.add_argument("--items", type=int, action="append", help="subset sizes to check (default 2, 4)")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    report = json.loads(args.report.read_text())
    by_item = rows_by_item(report)
    truth = sum(seconds(rows) for rows in by_item.values())
    if truth <= 0:
        raise SystemExit(f"{args.report}: the sequential run's timed requests sum to {truth} s")
    result: dict[str, Any] = {"report": str(args.report), "items": len(by_item), "measured_seconds": truth}
    counts = {
        m["mode"]: {k: m[k] for k in ("prompt_tokens", "generated_tokens", "prefix_cache_hit_rate")}
        for m in report["modes"]
        if m["mode"] in ("scheduled", "sequential")
    }
    result["token_counts"] = counts
    for mode, numbers in counts.items():
        print(f"{mode:10s} " + ", ".join(f"{k} {v}" for k, v in numbers.items()))
    for count in args.items or [2, 4]:
        checked = estimates(by_item, count)
        result[f"{count}_items"] = {
            name: {"seconds": round(value, 1), "error": round(value / truth - 1, 4)}
            for name, value in checked.items()
        }
        for name, value in checked.items():
            print(f"{count} of {len(by_item)} items  {name:34s} {value:9.1f} s  ({value / truth - 1:+.1%})")
        spread = every_subset(by_item, count, truth)
        result[f"{count}_items"]["every_subset"] = spread
        for rule, stats in spread.items():
            print(
                f"{count} of {len(by_item)} items, all {stats['subsets']} subsets  {rule:20s} |error| "
                f"mean {stats['mean_abs_error']:.1%}, p90 {stats['p90_abs_error']:.1%}, "
                f"max {stats['max_abs_error']:.1%}"
            )
    print(f"measured sequential over all {len(by_item)} items: {truth:.1f} s")
    if args.output:
        args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
