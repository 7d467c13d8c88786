"""The input files a run read (data, questions, labels), each with a content hash taken when the
run started (run.json's ``inputs``; chateval.run.input_files names them): a report says so when
a file still at that path has changed since."""

import hashlib
from pathlib import Path


def file_hash(path: Path) -> str:
    """``sha256:<hex>`` of the file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def changed_inputs(recorded: dict[str, str]) -> list[str]:
    """The recorded input files that still exist at their path with other contents."""
    return [
        path for path, digest in recorded.items() if Path(path).is_file() and file_hash(Path(path)) != digest
    ]
