#!/usr/bin/env python3
"""Fetch the public meta-evaluation data sets from their original public locations.

For users with internet access; nothing in chateval depends on this at run time. The files are
laid out as in the project's shared data folder, so configs work with
``--set data.path=DEST/...``:

  DEST/faireval/question.jsonl, answer/answer_<model>.jsonl, review/review_gpt35_vicuna-13b_human.txt
  DEST/chateval_faireval/preprocessed_data/test.json
  DEST/topical_chat/topical_chat.json

Usage: python scripts/download_datasets.py [--dest datasets] [--only faireval|chateval_faireval|topical_chat]
"""

import argparse
import sys
import urllib.error
import urllib.request
from pathlib import Path

FAIREVAL = "https://raw.githubusercontent.com/i-Eval/FairEval/HEAD/"
CHATEVAL = "https://github.com/thunlp/ChatEval/raw/83751ed/agentverse/tasks/llm_eval/data/faireval/"
UNIEVAL = "https://raw.githubusercontent.com/maszhongming/UniEval/9d9b51dc716f40f6b454a4455c7fe2f843aabfbb/"

SOURCES: dict[str, list[tuple[str, str]]] = {
    "faireval": [
        (FAIREVAL + "question.jsonl", "faireval/question.jsonl"),
        *[
            (FAIREVAL + f"answer/answer_{m}.jsonl", f"faireval/answer/answer_{m}.jsonl")
            for m in ("gpt35", "vicuna-13b", "gpt-4", "alpaca-13b")
        ],
        (
            FAIREVAL + "review/review_gpt35_vicuna-13b_human.txt",
            "faireval/review/review_gpt35_vicuna-13b_human.txt",
        ),
    ],
    # ChatEval's preprocessed file only exists in the repository's history (commit 83751ed).
    "chateval_faireval": [
        (CHATEVAL + "preprocessed_data/test.json", "chateval_faireval/preprocessed_data/test.json"),
    ],
    "topical_chat": [
        (UNIEVAL + "reproduce/data/dialogue/topical_chat.json", "topical_chat/topical_chat.json"),
    ],
}


def fetch(url: str, target: Path, timeout: float) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed https URLs)
        data = response.read()
    tmp = target.with_name(target.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(target)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dest", type=Path, default=Path("datasets"))
    parser.add_argument("--only", choices=sorted(SOURCES), action="append")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    for name in args.only or sorted(SOURCES):
        for url, relative in SOURCES[name]:
            target = args.dest / relative
            if target.is_file():
                print(f"have  {target}")
                continue
            try:
                fetch(url, target, args.timeout)
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                print(
                    f"error: could not fetch {url}: {exc}\n"
                    "This machine seems to be offline or the source moved. Copy the files from a "
                    "machine with internet access into the layout shown in --help.",
                    file=sys.stderr,
                )
                return 1
            print(f"got   {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
