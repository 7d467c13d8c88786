"""``chateval import CONFIG``, whichever kind of import config it is (chateval.config.import_configs):
pairwise verdicts through a mapping (chateval.run.importing), direct scores
(chateval.run.importing_direct) or ChatEval's own 2023 outputs (chateval.run.importing_2023)."""

from pathlib import Path

from chateval.config.chateval_imports import ChatEval2023ImportConfig
from chateval.config.direct_imports import DirectImportConfig
from chateval.config.import_configs import load_any_import_config
from chateval.run.importing import import_run
from chateval.run.importing_2023 import import_chateval_2023
from chateval.run.importing_direct import import_direct_run
from chateval.run.runner import RunResult


def import_any(config_path: Path | str, outdir: Path | str | None = None, force: bool = False) -> RunResult:
    """Import what ``config_path`` describes into the run folder ``outdir`` (default runs/NAME);
    nothing is written unless every record is good."""
    source = Path(config_path)
    config = load_any_import_config(source)
    if isinstance(config, DirectImportConfig):
        return import_direct_run(config, source, outdir, force)
    if isinstance(config, ChatEval2023ImportConfig):
        return import_chateval_2023(config, source, outdir, force)
    return import_run(source, outdir, force)
