"""A model's tokenizer is loaded once per process (chateval.core.tokenizers): counting before the
models load, the backends and every phased reload share it, until its folder changes."""

import os
import shutil
from pathlib import Path

from chateval.core.tokenizers import load_tokenizer
from tests.support.helpers import MODELS_DIR


def tokenizer_folder(tmp_path: Path) -> Path:
    """The default model's tokenizer files, alone in a folder of their own."""
    folder = tmp_path / "tokenizer"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(MODELS_DIR / "smollm2-135m" / name, folder / name)
    return folder


def test_one_folder_gives_one_tokenizer_until_a_file_changes(tmp_path: Path) -> None:
    folder = tokenizer_folder(tmp_path)
    first = load_tokenizer(folder)
    assert load_tokenizer(folder) is first
    assert load_tokenizer(str(folder / ".." / "tokenizer")) is first  # the same folder, spelt otherwise
    config = folder / "tokenizer_config.json"
    later = config.stat().st_mtime_ns + 10**9
    os.utime(config, ns=(later, later))  # rewritten in place: read again
    again = load_tokenizer(folder)
    assert again is not first and again("a test").input_ids == first("a test").input_ids
