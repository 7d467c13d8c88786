"""chateval's version, as ``chateval.__version__`` and ``pip show chateval-offline`` give it: written
here alone (pyproject.toml reads it from here)."""

__version__ = "0.1.0"
