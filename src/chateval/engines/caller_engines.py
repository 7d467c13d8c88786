"""The engines of a caller that builds its own backends (tests, tools, a sweep's scripted
runs): no model registry is read, nothing is estimated, and run.json names the config's
backend. The session uses these instead of ``factory.Engines`` when the caller passes a
backend factory, or hands in a backend for every model."""

from collections.abc import Callable, Mapping
from pathlib import Path

from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.model_spec import ModelSpec
from chateval.engines.placement import Placement, unestimated_placement
from chateval.engines.pool import Loader
from chateval.errors import BackendError

BackendFactory = Callable[[RunConfig, str], Backend]


def _nothing_to_load(config: RunConfig, model: str) -> Backend:
    """The factory of a session whose models were all handed in: it is never asked for one."""
    raise BackendError(f"no backend was given for model {model!r}")


class CallerEngines:
    """Backends the caller builds with ``factory(config, model)`` (by default none: every
    model is handed in); the same questions ``factory.Engines`` answers, without a registry."""

    def __init__(self, config: RunConfig, factory: BackendFactory = _nothing_to_load) -> None:
        self.config = config
        self.factory = factory

    def remote(self) -> set[str]:
        """None of a caller's models runs elsewhere as far as the run knows."""
        return set()

    def plan(self, given: Mapping[str, Backend]) -> Placement:
        """The configured mode (``auto``: co-resident): the caller's backends are not estimated."""
        return unestimated_placement(self.config.placement.mode, bool(given))

    def loader(self, placement: Placement) -> Loader:
        """The caller's factory, as the pool's loader."""
        return lambda model: self.factory(self.config, model)

    def tokenizer(self, model: str) -> None:
        """No tokenizer apart from the backend: the model is loaded to count its tokens."""
        return None

    def served_by(self, model: str) -> tuple[str, int]:
        """The config's backend, on one replica: the run knows nothing else of the caller's."""
        return self.config.backend, 1

    def registry_entry(self, model: str) -> tuple[ModelSpec | None, Path | None]:
        """No registry entry, no folder."""
        return None, None
