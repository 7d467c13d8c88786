"""What one driver can feed: a whole run through the streaming scheduler and journal onto N
scripted replicas that answer at once (no model), so the driver is the only cost.

    .venv/bin/python scripts/bench_driver.py [CONFIG] [--replicas 1 4 16] [--ray] [-o FILE]

Prints, per replica count, requests per second through the driver (prompt building, routing,
journaling with an fsync per debate step, verdict parsing) and per second of the driver's own
CPU time; docs/scaling.md uses the numbers.
Replicas are threads of this process, or with ``--ray`` actors of a local Ray instance (each
step call and its results then cross Ray's RPC and serialization, as with real replicas).
"""

import argparse
import functools
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from chateval.backends.replicas import ReplicaHandle, ReplicaSet, ReplicaWorker, ThreadReplica
from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.config.files import load_config
from chateval.core.backend import GenerationRequest
from chateval.run.runner import run


def answer(request: GenerationRequest) -> str:
    """An instant referee: a fixed sentence, or scores when a verdict is due."""
    if request.regex:
        return "Assistant 1: 7\nAssistant 2: 5"
    return "The first answer is more specific and covers the question better."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", nargs="?", default="configs/bench/faireval_3x2.yaml")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--ray", action="store_true", help="replicas as Ray actors (local Ray instance)")
    parser.add_argument("-o", "--out", default="runs/bench/driver.json")
    args = parser.parse_args()
    config = load_config(Path(args.config))
    config = config.model_copy(update={"verdict": config.verdict.model_copy(update={"soft": False})})
    model = config.model_names()[0]
    rows = []
    for count in args.replicas:
        load = functools.partial(StreamingScriptedBackend, model, answer, 64)
        if args.ray:
            import ray

            from chateval.backends.ray_replicas import RayReplica

            ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
            actor = ray.remote(ReplicaWorker).options(num_cpus=0)
            handles: list[ReplicaHandle] = [
                RayReplica(f"actor {i}", actor.remote(load)) for i in range(count)
            ]
        else:
            handles = [ThreadReplica(f"thread {i}", ReplicaWorker(load)) for i in range(count)]
        replicas = ReplicaSet(model, handles, ["local"] * count, ScriptedBackend(model, answer))
        with tempfile.TemporaryDirectory() as out:
            started, cpu_started = time.perf_counter(), time.process_time()
            result = run(config, Path(out), backends={m: replicas for m in config.model_names()})
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu_started  # this process only: the driver's own cost
        info = result.run_info
        rows.append(
            {
                "replicas": count,
                "debates": info["debates"],
                "requests": info["requests"],
                "debate_seconds": info["debate_seconds"],
                "requests_per_second": round(info["requests"] / info["debate_seconds"], 1),
                "wall_seconds": round(wall, 3),
                "driver_cpu_seconds": round(cpu, 3),
                "requests_per_driver_cpu_second": round(info["requests"] / cpu, 1),
            }
        )
        print(json.dumps(rows[-1]))
    report = {
        "config": args.config,
        "replicas_as": "ray actors" if args.ray else "threads",
        "machine": platform.node(),
        "cores": os.cpu_count(),
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
