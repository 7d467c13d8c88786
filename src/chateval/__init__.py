"""chateval: offline multi-agent debate evaluation (ChatEval) on local open-weight models.

The public API, for a notebook or a script::

    import chateval

    config = chateval.load_config("configs/quickstart.yaml", ["rounds=1"])
    result = chateval.evaluate(config, "runs/notebook")   # writes the run folder
    result.metrics["panel"]                               # agreement with the human labels
    finished = chateval.load_finished_run("runs/notebook")
    finished.verdicts()                                   # one record per item

Everything else is internal. Importing the package is cheap: the names above are imported on
first use, and the heavy dependencies (torch, vllm, transformers) only when a backend loads.
"""

import importlib
from typing import TYPE_CHECKING, Any

from chateval import offline
from chateval.errors import (
    BackendError,
    ChatEvalError,
    ConfigError,
    DataError,
    VerdictError,
)
from chateval.version import __version__

# Before any dependency can be imported (the modules above import none): telemetry and hub
# look-ups off, for this process and every process it starts (offline.py).
offline.switch_off()

if TYPE_CHECKING:
    from chateval.config.files import load_config
    from chateval.config.run import RunConfig
    from chateval.run.finished import FinishedRun, load_finished_run
    from chateval.run.rescore import rescore
    from chateval.run.runner import RunResult
    from chateval.run.runner import run as evaluate

# Public name -> (module, attribute), imported when first asked for.
_LAZY = {
    "RunConfig": ("chateval.config.run", "RunConfig"),
    "load_config": ("chateval.config.files", "load_config"),
    "evaluate": ("chateval.run.runner", "run"),
    "RunResult": ("chateval.run.runner", "RunResult"),
    "FinishedRun": ("chateval.run.finished", "FinishedRun"),
    "load_finished_run": ("chateval.run.finished", "load_finished_run"),
    "rescore": ("chateval.run.rescore", "rescore"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'chateval' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BackendError",
    "ChatEvalError",
    "ConfigError",
    "DataError",
    "FinishedRun",
    "RunConfig",
    "RunResult",
    "VerdictError",
    "__version__",
    "evaluate",
    "load_config",
    "load_finished_run",
    "rescore",
]
