"""The error hierarchy. Every message names the bad value and what is allowed."""


class ChatEvalError(Exception):
    """Base class of every error chateval raises on purpose."""


class ConfigError(ChatEvalError):
    """A run config, role, model registry entry or command-line override is invalid."""


class DataError(ChatEvalError):
    """An input data file or one of its records is invalid."""


class BackendError(ChatEvalError):
    """A generation backend could not load a model or failed while generating."""


class VerdictError(ChatEvalError):
    """A referee's final answer could not be parsed into a verdict."""


class OutputError(ChatEvalError):
    """A file or folder could not be written where a command writes it (a read-only place, no
    permission, a full disk)."""
