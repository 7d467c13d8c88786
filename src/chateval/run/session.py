"""What a run and a bench set up alike before any model loads: the items read (a bad data file
fails here), the panel built, and the models' registry entries and backend settings checked
(unknown names and settings fail here, before any file is written or model loaded)."""

from collections.abc import Mapping
from dataclasses import dataclass

from chateval.config.run import RunConfig
from chateval.core.backend import Backend, TokenCounter
from chateval.core.items import Item
from chateval.debate.building import build_panel, load_run_items
from chateval.debate.panel import Panel
from chateval.engines.context import Truncation, fit_items
from chateval.engines.factory import check_backend_settings
from chateval.engines.models import ModelRegistry
from chateval.engines.placement import BackendFactory, default_backend_factory


@dataclass(frozen=True)
class Session:
    """A config's items, panel and models, checked and ready for placement and loading."""

    config: RunConfig
    items: list[Item]  # as loaded, before ``fit`` cuts them to the models' context
    panel: Panel
    models: list[str]
    # None: every model was given (tests, sweeps) or a custom factory builds them.
    registry: ModelRegistry | None

    def fit(self, counters: Mapping[str, TokenCounter]) -> tuple[list[Item], dict[str, list[Truncation]]]:
        """The items cut to fit every model's context (the config's policy), and what was cut."""
        config = self.config
        return fit_items(self.panel, self.items, counters, config.context_policy, config.data.source)


def open_session(
    config: RunConfig,
    backends: Mapping[str, Backend] | None = None,
    backend_factory: BackendFactory = default_backend_factory,
) -> Session:
    """Read and check everything ``config`` needs before a model loads."""
    items = load_run_items(config)
    panel = build_panel(config)
    models = config.model_names()
    registry = None
    if backend_factory is default_backend_factory and any(m not in (backends or {}) for m in models):
        registry = ModelRegistry(config.models_dir)
        for model in models:
            registry.spec(model)  # unknown names fail here, before any file is written
        check_backend_settings(config, models, registry)
    return Session(config, items, panel, models, registry)
