"""Which files of a model folder count: the one rule that the run record's model fingerprint
(chateval.record.roster) and the judgment store's content digest (chateval.store.fingerprints)
share, so the two never disagree on what a model is."""

from pathlib import Path


def model_files(folder: Path) -> list[Path]:
    """The folder's files, sorted, hidden files and folders (any part starting with ".") left
    out: ``.git``, a hub cache's ``.cache`` change while the weights do not."""
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
