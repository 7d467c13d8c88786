"""Hugging Face tokenizers, loaded once per process for each model.

Loading a tokenizer takes seconds (Gemma 3's 262k-token vocabulary several), and a run asked for
each model's several times: to count tokens before the models load, again when the transformers
or served backend starts, and again at every reload under phased placement, where the models
take turns. A folder is keyed by its path and the size and modification time of its files, so
a folder rewritten in place (``chateval models prepare``) is read again.
"""

import functools
from pathlib import Path
from typing import Any

from chateval.core.model_files import model_files


def load_tokenizer(source: Path | str, trust_remote_code: bool = False) -> Any:
    """The tokenizer of ``source`` (a model folder, or a hub id in the local cache), shared by
    every caller in this process: a caller may set what a tokenizer lacks (a pad token) but must
    not change what it has."""
    path = Path(source)
    if not path.is_dir():
        return _load(str(source), trust_remote_code, ())
    stamp = []
    for file in model_files(path):  # the files that count: hidden ones (.git, .cache) left out
        stat = file.stat()
        stamp.append((str(file.relative_to(path)), stat.st_size, stat.st_mtime_ns))
    return _load(str(path.resolve()), trust_remote_code, tuple(stamp))


@functools.lru_cache(maxsize=8)
def _load(source: str, trust_remote_code: bool, stamp: tuple[tuple[str, int, int], ...]) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
