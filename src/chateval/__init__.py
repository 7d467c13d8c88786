"""chateval: offline multi-agent debate evaluation (ChatEval) on local open-weight models.

Importing the package is cheap: heavy dependencies (torch, vllm, transformers) are imported
only inside the backend modules, when a backend is created.
"""

from chateval.errors import (
    BackendError,
    ChatEvalError,
    ConfigError,
    DataError,
    VerdictError,
)

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "ChatEvalError",
    "ConfigError",
    "DataError",
    "VerdictError",
    "__version__",
]
