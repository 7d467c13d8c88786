"""A model folder's digest: over its files' names and whole contents, hidden files left out,
each file read once and then known by its stat (the designed trade-off is tested as such)."""

import os
import sqlite3
import time
from pathlib import Path

import pytest

from chateval.store import fingerprints
from chateval.store.judgments import JudgmentStore

A_WHILE_AGO_NS = 1_700_000_000 * 10**9  # November 2023: files older than fingerprints.RECENT_S


def model_folder(root: Path) -> Path:
    """A small model folder (weights, config, a tokenizer in a subfolder, a hidden .cache), its
    files last modified a while ago."""
    folder = root / "model"
    files = {
        "config.json": b'{"hidden_size": 8}',
        "model.safetensors": os.urandom(3 * fingerprints.BLOCK_BYTES + 17),
        "tokenizer/tokenizer.json": b'{"vocab": {}}',
        ".cache/huggingface/download.lock": b"",
    }
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        os.utime(path, ns=(A_WHILE_AGO_NS, A_WHILE_AGO_NS))
    return folder


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files whose contents are read, in order."""
    seen: list[str] = []
    read = fingerprints.file_sha256

    def counting(path: Path) -> str:
        seen.append(path.name)
        return read(path)

    monkeypatch.setattr(fingerprints, "file_sha256", counting)
    return seen


def test_a_folder_is_read_once_then_known_by_its_files_stat(tmp_path: Path, reads: list[str]) -> None:
    folder = model_folder(tmp_path)
    with JudgmentStore(tmp_path / "cache") as store:
        first = store.folder_digest(folder)
        assert first.startswith("sha256:") and len(first) == len("sha256:") + 64
        assert sorted(reads) == ["config.json", "model.safetensors", "tokenizer.json"]  # .cache left out
        reads.clear()
        assert store.folder_digest(folder) == first
    with JudgmentStore(tmp_path / "cache") as store:  # kept in the store's file
        assert store.folder_digest(folder) == first
    assert reads == []


def test_an_edited_file_changes_the_digest_and_is_the_only_one_read_again(
    tmp_path: Path, reads: list[str]
) -> None:
    folder = model_folder(tmp_path)
    with JudgmentStore(tmp_path / "cache") as store:
        first = store.folder_digest(folder)
        reads.clear()
        config = folder / "config.json"
        config.write_bytes(b'{"hidden_size": 16}')
        os.utime(config, ns=(A_WHILE_AGO_NS + 10**9, A_WHILE_AGO_NS + 10**9))
        second = store.folder_digest(folder)
        assert second != first and reads == ["config.json"]
        (folder / "tokenizer" / "tokenizer.json").rename(folder / "tokenizer" / "renamed.json")
        assert store.folder_digest(folder) not in (first, second)  # a file's name counts too


def test_the_digest_is_the_folders_wherever_it_is_and_whatever_is_hidden(tmp_path: Path) -> None:
    folder = model_folder(tmp_path)
    with JudgmentStore(tmp_path / "cache") as store:
        first = store.folder_digest(folder)
        copy = tmp_path / "copy"
        copy.mkdir()
        folder.rename(copy / "model")
        (copy / "model" / ".git").mkdir()
        (copy / "model" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        assert store.folder_digest(copy / "model") == first


def test_a_file_rewritten_with_its_old_size_and_time_keeps_its_digest_by_design(
    tmp_path: Path, reads: list[str]
) -> None:
    """The trade-off fingerprints.py documents: the stat decides, as git's index does."""
    folder = model_folder(tmp_path)
    config = folder / "config.json"
    with JudgmentStore(tmp_path / "cache") as store:
        first = store.folder_digest(folder)
        reads.clear()
        with config.open("r+b") as handle:  # in place: the same inode, the same size
            handle.write(b'{"hidden_size": 9}')
        os.utime(config, ns=(A_WHILE_AGO_NS, A_WHILE_AGO_NS))
        assert store.folder_digest(folder) == first and reads == []


def test_a_file_modified_just_now_is_read_each_time(tmp_path: Path, reads: list[str]) -> None:
    folder = model_folder(tmp_path)
    (folder / "config.json").write_bytes(b'{"hidden_size": 32}')  # its time: now
    with JudgmentStore(tmp_path / "cache") as store:
        first = store.folder_digest(folder)
        reads.clear()
        assert store.folder_digest(folder) == first
        assert reads == ["config.json"]
        settled = time.time_ns() - int(fingerprints.RECENT_S * 2e9)
        os.utime(folder / "config.json", ns=(settled, settled))
        store.folder_digest(folder)
        reads.clear()
        store.folder_digest(folder)
        assert reads == []


def test_digests_of_files_that_are_gone_are_forgotten_on_pruning(tmp_path: Path) -> None:
    folder = model_folder(tmp_path)
    with JudgmentStore(tmp_path / "cache") as store:
        store.folder_digest(folder)
        (folder / "config.json").unlink()
        store.prune(everything=True)
    with sqlite3.connect(store.path) as connection:
        remaining = connection.execute("SELECT path FROM file_digests").fetchall()
    assert sorted(Path(path).name for (path,) in remaining) == ["model.safetensors", "tokenizer.json"]
