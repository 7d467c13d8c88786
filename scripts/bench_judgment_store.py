"""How the judgment store scales: a store of N synthetic debates (default 100,000), each of
realistic size (10 utterances of about 400 characters, with speaker, round and token counts),
built in a temporary folder with one ``put`` per debate as a run stores them; then its size on
disk, the time to open it, one ``get_many`` of 1,000 stored keys and 1,000 absent ones (a run's
lookup), and 1,000 more ``put``s one by one.

    .venv/bin/python scripts/bench_judgment_store.py [--debates 100000] [--folder DIR] [-o FILE]

Prints a short table and the figures as JSON (to FILE with -o), with the machine they were
measured on; docs/performance.md uses them.
"""

import argparse
import hashlib
import json
import os
import platform
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chateval.store.judgments import JudgmentStore, StoredDebate

SPEAKERS = ("Critic", "Scientist", "Psychologist", "Everyday reader", "Subject expert")
PROSE = (
    "the answer first second assistant question more accurate detail covers misses point clear "
    "helpful relevant example because however although correct incomplete specific argument I "
    "agree disagree with reasoning evidence claim response better worse overall score explains"
)
WORDS = PROSE.split()
LOOKUPS = 1000
PUTS = 1000


def sentences(rng: random.Random, count: int, chars: int) -> list[str]:
    """``count`` texts of about ``chars`` characters of made-up referee prose."""
    texts = []
    for _ in range(count):
        words: list[str] = []
        while sum(len(word) + 1 for word in words) < chars:
            words.append(rng.choice(WORDS))
        texts.append(" ".join(words)[:chars].capitalize() + ".")
    return texts


def key_of(number: int) -> str:
    return hashlib.sha256(f"debate {number}".encode()).hexdigest()


def debate(number: int, panel: str, texts: list[str], utterances: int, rng: random.Random) -> StoredDebate:
    """Debate ``number``: ``utterances`` utterances drawn from ``texts``, its own number in each
    (no two payloads alike)."""
    said: list[dict[str, Any]] = [
        {
            "speaker": SPEAKERS[turn % len(SPEAKERS)],
            "round": turn // len(SPEAKERS) + 1,
            "text": f"[{number}] " + rng.choice(texts),
            "prompt_tokens": rng.randrange(300, 2000),
            "completion_tokens": rng.randrange(40, 160),
        }
        for turn in range(utterances)
    ]
    return StoredDebate(key_of(number), panel, said, "/runs/bench", "2025-06-01T10:00:00+00:00")


def measure(folder: Path, debates: int, utterances: int, chars: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    texts = sentences(rng, 2000, chars)
    panel = hashlib.sha256(b"bench panel").hexdigest()
    started = time.perf_counter()
    with JudgmentStore(folder) as store:
        store.describe_panel(panel, "the bench's synthetic panel")
        for number in range(debates):
            store.put(debate(number, panel, texts, utterances, rng))
    build_s = time.perf_counter() - started
    path = folder / "judgments.sqlite"
    file_bytes = path.stat().st_size

    started = time.perf_counter()
    store = JudgmentStore(folder)
    open_s = time.perf_counter() - started
    with store:
        present = [key_of(number) for number in rng.sample(range(debates), min(LOOKUPS, debates))]
        absent = [key_of(debates + number) for number in range(LOOKUPS)]
        asked = present + absent
        rng.shuffle(asked)
        started = time.perf_counter()
        found = store.get_many(asked)
        lookup_s = time.perf_counter() - started
        assert len(found) == len(present), "a stored debate was not found"
        started = time.perf_counter()
        for number in range(debates + LOOKUPS, debates + LOOKUPS + PUTS):
            store.put(debate(number, panel, texts, utterances, rng))
        puts_s = time.perf_counter() - started
        entries = store.summary().entries
    payload = len(json.dumps(debate(0, panel, texts, utterances, rng).utterances, separators=(",", ":")))
    return {
        "debates": debates,
        "utterances_per_debate": utterances,
        "chars_per_utterance": chars,
        "payload_bytes_per_debate": payload,
        "build_s": round(build_s, 2),
        "file_bytes": file_bytes,
        "open_s": round(open_s, 4),
        "lookup": {"present": len(present), "absent": len(absent), "get_many_s": round(lookup_s, 4)},
        "puts": {"count": PUTS, "total_s": round(puts_s, 3), "per_put_ms": round(1000 * puts_s / PUTS, 3)},
        "entries_after": entries,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "folder": str(folder),
        },
    }


def table(result: dict[str, Any]) -> str:
    machine = result["machine"]
    lookup = result["lookup"]
    rows = [
        (
            "debates stored",
            f"{result['debates']:,} ({result['payload_bytes_per_debate']:,} bytes of JSON each)",
        ),
        ("build (one put each)", f"{result['build_s']:.1f} s"),
        ("file size", f"{result['file_bytes'] / 1e6:,.1f} MB"),
        ("open", f"{1000 * result['open_s']:.1f} ms"),
        (
            f"get_many ({lookup['present']:,} present + {lookup['absent']:,} absent)",
            f"{1000 * lookup['get_many_s']:.1f} ms",
        ),
        (
            f"{result['puts']['count']:,} puts one by one",
            f"{result['puts']['total_s']:.2f} s ({result['puts']['per_put_ms']:.2f} ms each)",
        ),
        ("machine", f"{machine['platform']}, {machine['cpu_count']} CPUs, SQLite {machine['sqlite']}"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--debates", type=int, default=100_000)
    parser.add_argument("--utterances", type=int, default=10, help="per debate")
    parser.add_argument("--chars", type=int, default=400, help="per utterance")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, help="build the store here (default: a temporary folder)")
    parser.add_argument("-o", "--output", type=Path, help="write the JSON here")
    args = parser.parse_args()
    if args.folder is not None:
        result = measure(args.folder, args.debates, args.utterances, args.chars, args.seed)
    else:
        with tempfile.TemporaryDirectory(prefix="judgment-store-bench-") as folder:
            result = measure(Path(folder) / "store", args.debates, args.utterances, args.chars, args.seed)
    print(table(result))
    text = json.dumps(result, indent=2)
    if args.output is not None:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
