"""Running a list of configs in one process, loading each model once.

Every config's session is opened before the first run starts (its config, data, panel, models
and backend settings checked, chateval.run.session), so a typo or a missing file in the last
one does not waste the hours spent on the others; each run then goes on in its own session.
Engines are shared by (backend, model, models_dir): the engine settings of the first config
that needs a model are the ones used for all. Every run's folder is locked before the first
model loads and stays locked until the sweep ends (chateval.record.lock): a folder another
command writes stops the sweep at once, not after the runs before it.
"""

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from chateval.config.files import load_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.progress import Progress
from chateval.debate.scheduler import StepCallback
from chateval.engines.caller_engines import BackendFactory
from chateval.engines.pool import load_logged
from chateval.record.files import RunFolder
from chateval.run.reuse import CacheChoice
from chateval.run.runner import RunResult, run
from chateval.run.session import open_session

EngineKey = tuple[str, str, str]


def run_sweep(
    config_paths: Sequence[Path],
    root: Path,
    overrides: Sequence[str] = (),
    *,
    force: bool = False,
    on_step: StepCallback | None = None,
    on_run: Callable[[RunConfig], None] | None = None,
    backend_factory: BackendFactory | None = None,
    progress: Callable[[], Progress] | None = None,
    cache: CacheChoice | None = None,
) -> list[RunResult]:
    """Run every config into ``root/<config name>``; returns the results in order.

    ``progress`` makes each run's bar; ``cache``: every run's judgment store (default: each
    config's own ``cache``)."""
    configs: list[RunConfig] = [load_config(p, list(overrides)) for p in config_paths]
    folders = [RunFolder(root / name) for name in dict.fromkeys(config.name for config in configs)]
    engines: dict[EngineKey, Backend] = {}
    results = []
    with ExitStack() as locks:
        # As a run does: a folder there already is locked at once, a new one once every config
        # is checked (the second hold of a folder is the first's).
        for folder in folders:
            if folder.path.is_dir():
                locks.enter_context(folder.writing("chateval sweep"))
        sessions = [open_session(config, backend_factory=backend_factory) for config in configs]
        for folder in folders:
            locks.enter_context(folder.writing("chateval sweep"))
        try:
            for session in sessions:
                config = session.config
                if on_run is not None:
                    on_run(config)
                backends = {}
                for model in session.models:
                    key = (config.backend, model, str(config.models_dir))
                    if key not in engines:
                        engines[key], _ = load_logged(session.loader(), model)
                    backends[model] = engines[key]
                bar = progress() if progress is not None else None
                # The sweep's engines, handed to the run as a caller's: never closed or swapped by it.
                placement = session.engines.plan(backends)
                shared = replace(session, given=backends, placement=placement)
                results.append(
                    run(
                        config,
                        root / config.name,
                        force=force,
                        on_step=on_step,
                        progress=bar,
                        session=shared,
                        cache=cache,
                    )
                )
        finally:
            for engine in engines.values():
                engine.close()
    return results
