"""roster.json, written with the run's results: who judged. The panel's speakers with their
roles' names and texts and their models, and each model with what served it and which weights:
a report shows the panel as it was, whatever the role library or the model registry says by
the time it is read.

A model folder's fingerprint is a sha256 over its files' relative names and sizes, the whole
content of each file up to ``_WHOLE_BYTES`` (config, tokenizer, chat template) and the first and
last MiB of each larger one (a safetensors file begins with the names, shapes and offsets of
its tensors). Weights of tens of GiB are not read whole at every run; two folders
with the same fingerprint hold the same configuration, tokenizer and tensor layout.
"""

import hashlib
import logging
from pathlib import Path

from chateval.core.model_files import model_files
from chateval.core.model_spec import ModelSpec
from chateval.core.transcript import SUMMARIZER
from chateval.schema.roster import Roster, RosterModel

log = logging.getLogger(__name__)
_WHOLE_BYTES = 16 << 20
_EDGE_BYTES = 1 << 20


def folder_fingerprint(folder: Path) -> str | None:
    """``sha256:<hex>`` over the folder's files (see the module's docstring), hidden files and
    folders left out (``.git``, a hub cache's ``.cache``: they change while the weights do
    not); None when a file cannot be read (the run's results are kept all the same)."""
    digest = hashlib.sha256()
    try:
        for path in model_files(folder):
            size = path.stat().st_size
            digest.update(f"{path.relative_to(folder)}\0{size}\0".encode())
            with path.open("rb") as handle:
                if size <= _WHOLE_BYTES:
                    digest.update(handle.read())
                else:
                    digest.update(handle.read(_EDGE_BYTES))
                    handle.seek(size - _EDGE_BYTES)
                    digest.update(handle.read(_EDGE_BYTES))
    except OSError as exc:
        log.warning("model folder %s: no fingerprint recorded (%s)", folder, exc)
        return None
    return f"sha256:{digest.hexdigest()}"


def model_entry(backend: str, replicas: int, spec: ModelSpec | None, folder: Path | None) -> RosterModel:
    """A model's roster entry: what served it, from ``spec`` (None: a backend handed in) and its
    resolved ``folder`` (None: none)."""
    local = folder is not None and folder.is_dir()
    return {
        "backend": backend,
        "replicas": replicas,
        "path": str(folder) if local else None,
        "fingerprint": folder_fingerprint(folder) if local and folder is not None else None,
        "server": spec.server.base_url if spec is not None and spec.server is not None else None,
        "dtype": spec.dtype if spec is not None else None,
        "max_model_len": spec.max_model_len if spec is not None else None,
    }


def speakers(roster: Roster) -> dict[str, tuple[str, str]]:
    """Speaker name (as transcripts have it) -> (role name, model), the summarizer included."""
    found = {r["name"]: (r["role"], r["model"]) for r in roster["referees"]}
    found[SUMMARIZER.capitalize()] = ("summarizer", roster["summarizer_model"])
    return found


def referee_models(roster: Roster) -> dict[str, str]:
    """Each referee's model by its speaker name."""
    return {r["name"]: r["model"] for r in roster["referees"]}
