"""The backends of a run's models: loaded up front (co-resident) or one at a time (phased).

The pool is what the scheduler asks for a model's backend; where the models should live
(``chateval.engines.placement``) decides its mode.
"""

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from chateval.core.backend import Backend, resident_first
from chateval.errors import BackendError

log = logging.getLogger(__name__)

Loader = Callable[[str], Backend]


def load_logged(loader: Loader, model: str) -> tuple[Backend, float]:
    """Load ``model``, saying so before and after (the console's "what is being loaded");
    returns the backend and the seconds it took."""
    started = time.perf_counter()
    log.info("loading model %s", model)
    backend = loader(model)
    seconds = time.perf_counter() - started
    log.info("loaded model %s in %.1f s", model, seconds)
    return backend, seconds


class ModelPool:
    """The backends of a run's models, loaded up front (co-resident) or on demand (phased).

    Backends handed in as ``preloaded`` (tests, sweeps) belong to the caller: they are always
    available and never closed or released by the pool. ``pinned`` models (served ones, which
    hold no local memory) are loaded at the start and stay, in either mode.
    """

    def __init__(
        self,
        models: Sequence[str],
        loader: Loader | None = None,
        mode: Literal["co_resident", "phased"] = "co_resident",
        preloaded: Mapping[str, Backend] | None = None,
        pinned: Iterable[str] = (),
        on_load: Callable[[str], None] | None = None,
    ) -> None:
        self.models = list(models)
        self.on_load = on_load  # called with each model once it is loaded
        self.pinned = set(pinned)
        self.loader = loader
        self.mode = mode
        self.preloaded = dict(preloaded or {})
        self.loaded: dict[str, Backend] = {}
        self.loads: dict[str, int] = {}
        self.load_seconds = 0.0

    @classmethod
    def fixed(cls, backends: Mapping[str, Backend]) -> "ModelPool":
        """A pool of already-loaded backends."""
        return cls(list(backends), preloaded=backends)

    def start(self) -> None:
        """Load every model now (co-resident) or the first one (phased)."""
        to_load = [m for m in self.models if m not in self.preloaded]
        swapped = [m for m in to_load if m not in self.pinned]
        for model in to_load if self.mode == "co_resident" else [*self.pinned & set(to_load), *swapped[:1]]:
            self.get(model)

    def resident(self) -> list[str]:
        return list(self.preloaded) + list(self.loaded)

    def order(self, models: Iterable[str]) -> list[str]:
        """``models`` with the resident ones first, so a phased step swaps at most once."""
        return resident_first(models, self.resident())

    def get(self, model: str) -> Backend:
        """The backend of ``model``, loading it (and in phased mode releasing others) if needed."""
        if model in self.preloaded:
            return self.preloaded[model]
        if model in self.loaded:
            return self.loaded[model]
        if self.loader is None:
            raise BackendError(f"no backend loaded for model {model!r}")
        if self.mode == "phased" and model not in self.pinned:
            self.release_all(keep=self.pinned)
        self.loaded[model], seconds = load_logged(self.loader, model)
        self.load_seconds += seconds
        self.loads[model] = self.loads.get(model, 0) + 1
        if self.on_load is not None:
            self.on_load(model)
        return self.loaded[model]

    def release_all(self, keep: Iterable[str] = ()) -> None:
        """Close every backend this pool loaded, except those of ``keep``."""
        for model in [m for m in self.loaded if m not in set(keep)]:
            log.debug("releasing model %s", model)
            self.loaded.pop(model).close()

    def close(self) -> None:
        self.release_all()

    def info(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "loads": dict(self.loads),
            "swaps": max(0, sum(self.loads.values()) - len(self.loads)),
            "load_seconds": round(self.load_seconds, 3),
        }
