"""Running a list of configs in one process, loading each model once.

All configs are validated before the first run starts, so a typo in the last one does not
waste the hours spent on the others. Engines are shared by (backend, model, models_dir): the
engine settings of the first config that needs a model are the ones used for all.
"""

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from chateval.config.files import load_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.progress import Progress
from chateval.debate.scheduler import StepCallback
from chateval.engines.placement import BackendFactory, default_backend_factory
from chateval.engines.pool import load_logged
from chateval.run.runner import RunResult, run

EngineKey = tuple[str, str, str]


def run_sweep(
    config_paths: Sequence[Path],
    root: Path,
    overrides: Sequence[str] = (),
    *,
    force: bool = False,
    on_step: StepCallback | None = None,
    on_run: Callable[[RunConfig], None] | None = None,
    backend_factory: BackendFactory = default_backend_factory,
    progress: Callable[[], Progress] | None = None,
) -> list[RunResult]:
    """Run every config into ``root/<config name>``; returns the results in order.

    ``progress`` makes each run's bar."""
    configs: list[RunConfig] = [load_config(p, list(overrides)) for p in config_paths]
    engines: dict[EngineKey, Backend] = {}
    results = []
    try:
        for config in configs:
            if on_run is not None:
                on_run(config)
            backends = {}
            for model in config.model_names():
                key = (config.backend, model, str(config.models_dir))
                if key not in engines:
                    engines[key], _ = load_logged(partial(backend_factory, config), model)
                backends[model] = engines[key]
            bar = progress() if progress is not None else None
            results.append(
                run(config, root / config.name, force=force, backends=backends, on_step=on_step, progress=bar)
            )
    finally:
        for engine in engines.values():
            engine.close()
    return results
