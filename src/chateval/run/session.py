"""What a run and a bench set up alike, once: the items read (a bad data file fails here), the
panel built, the models' registry entries and backend settings checked (unknown names and
settings fail here, before any file is written or model loaded, and so do an item over a
model's context under ``context_policy: fail`` and a soft verdict's missing score tokens,
counted with the tokenizers alone), the placement planned, the engines loaded into a pool, and
the items cut to the models' contexts and turned into debates.

``runner.run`` and ``bench.modes.run_bench`` are sequences of these stage calls; the registry
is read once, here, into the run's ``Engines`` (engines/factory.py), which check, size and load
every model; a caller that builds its own backends gets ``CallerEngines`` instead.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from chateval.config.run import RunConfig
from chateval.core.backend import Backend, TokenCounter
from chateval.core.items import Item
from chateval.core.transcript import Debate
from chateval.debate.building import (
    build_debates,
    build_panel,
    check_debatable,
    check_soft_verdicts,
    load_run_items,
)
from chateval.debate.panel import Panel
from chateval.engines.caller_engines import BackendFactory, CallerEngines
from chateval.engines.context import Truncation, fit_items
from chateval.engines.factory import Engines
from chateval.engines.models import ModelRegistry
from chateval.engines.placement import Placement
from chateval.engines.pool import Loader, ModelPool
from chateval.evaluation.settings import StatisticsSettings
from chateval.record.roster import model_entry
from chateval.run.input_files import input_hashes
from chateval.run.roster import panel_roster
from chateval.run.statistics import panel_models, statistics_settings
from chateval.run.system_prompts import log_replaced, replaced_system_prompts
from chateval.schema.roster import Roster


@dataclass(frozen=True)
class Judged:
    """What a config judges, read once: its items (as loaded), its panel, and each input
    file's hash as the items were read."""

    items: list[Item]
    panel: Panel
    inputs: dict[str, str]


def read_judged(config: RunConfig) -> Judged:
    """The first stage of every session: the items read (a bad data file fails here) and the
    panel built; ``chateval preview`` needs nothing more, and loads no model."""
    check_debatable(config)
    items = load_run_items(config)
    panel = build_panel(config)
    return Judged(items, panel, input_hashes(config.data))  # a report notices a later edit


@dataclass(frozen=True)
class Prepared:
    """The items cut to fit every model's context, what was cut, and their debates."""

    items: list[Item]
    truncations: dict[str, list[Truncation]]
    debates: list[Debate]
    # model -> the default system prompt its chat template would add, replaced by an empty one
    system_prompts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Session:
    """A config's items, panel and models, checked, with the placement its engines will take."""

    config: RunConfig
    items: list[Item]  # as loaded, before ``prepare`` cuts them to the models' context
    panel: Panel
    models: list[str]
    engines: Engines | CallerEngines  # what checks, sizes and loads the models not given
    placement: Placement
    given: Mapping[str, Backend] = field(default_factory=dict)  # the caller's; never closed here
    inputs: Mapping[str, str] = field(default_factory=dict)  # input file -> its hash, as read

    @property
    def referees(self) -> dict[str, str]:
        """Each referee's model, by the referee's name on the panel."""
        return panel_models(self.panel)[0]

    @property
    def summarizer_model(self) -> str:
        return self.panel.summarizer_model

    def statistics(self) -> StatisticsSettings:
        """What the statistics need of this run: its config's settings and who judged with which model."""
        return statistics_settings(self.config, *panel_models(self.panel))

    def loader(self) -> Loader:
        """How a model not given is loaded (co-resident vLLM engines on a GPU split its memory)."""
        return self.engines.loader(self.placement)

    def pool(self, on_load: Callable[[str], None] | None = None) -> ModelPool:
        """The run's engines as the placement keeps them; ``on_load(model)`` after each load.
        Nothing is loaded until ``start``."""
        return ModelPool(
            self.models,
            self.loader(),
            self.placement.mode,
            self.given,
            pinned=self.engines.remote(),
            on_load=on_load,
        )

    def counters(self, pool: ModelPool) -> dict[str, TokenCounter]:
        """A token counter per model: its loaded backend, else (phased, not yet loaded) its
        tokenizer alone where the engines have one (a caller's backend is loaded to count)."""
        counters: dict[str, TokenCounter] = {}
        for model in self.models:
            tokenizer = None if model in pool.resident() else self.engines.tokenizer(model)
            counters[model] = pool.get(model) if tokenizer is None else tokenizer
        return counters

    def counters_before_loading(self) -> dict[str, TokenCounter]:
        """A token counter for each model that has one before any model loads: a backend the
        caller gave (loaded already), else a local model's tokenizer. A served model counts
        with its server, a caller's factory's model with the backend it loads: neither is up yet."""
        remote = self.engines.remote()
        counters: dict[str, TokenCounter] = {}
        for model in self.models:
            counter: TokenCounter | None = self.given.get(model)
            if counter is None and model not in remote:
                counter = self.engines.tokenizer(model)
            if counter is not None:
                counters[model] = counter
        return counters

    def refuse_early(self) -> None:
        """Refuse now, before any model loads or any file is written, what ``prepare`` would
        refuse once the models are up and their tokenizers alone show (``chateval check`` runs
        the same checks): a soft verdict's score tokens missing from a referee's vocabulary,
        and under ``context_policy: fail`` an item over a model's context. Under ``truncate``
        an item over it is cut, not refused: ``prepare`` does that, once."""
        config = self.config
        if not config.verdict.soft and config.context_policy != "fail":
            return
        counters = self.counters_before_loading()
        if config.verdict.soft:
            check_soft_verdicts(self.panel, counters)
        if config.context_policy == "fail":
            fit_items(self.panel, self.items, counters, "fail", config.data.source)

    def prepare(self, counters: Mapping[str, TokenCounter]) -> Prepared:
        """The items cut to fit every model's context (the config's policy) and their debates
        (both answer orders when calibrating); soft verdicts checked against each referee's
        vocabulary first."""
        config = self.config
        if config.verdict.soft:
            check_soft_verdicts(self.panel, counters)
        policy, source = config.context_policy, config.data.source
        items, truncations = fit_items(self.panel, self.items, counters, policy, source)
        replaced = replaced_system_prompts(counters)
        log_replaced(replaced)
        return Prepared(items, truncations, build_debates(items, config.calibrated), replaced)

    def roster(self, system_prompts: Mapping[str, str]) -> Roster:
        """roster.json: the panel, and each model with what served it, its folder's
        fingerprint and the template's system prompt chateval replaced (``system_prompts``, as
        ``prepare`` found them); call it once the models are loaded (a folder may be prepared
        on load)."""
        models = {}
        for model, (kind, replicas) in self.served_by().items():
            # A sweep's engines are given, loaded from the registry: their entries are still known.
            spec, folder = self.engines.registry_entry(model)
            models[model] = model_entry(kind, replicas, spec, folder)
            models[model]["replaced_system_prompt"] = system_prompts.get(model)
        return panel_roster(self.panel, self.config.prompt_style, models)

    def served_by(self) -> dict[str, tuple[str, int]]:
        """What served each model and on how many replicas: a backend handed in by its class
        (``ScriptedBackend``: scripted), else what the engines say: its registry entry's or the
        config's backend."""
        out = {}
        for model in self.models:
            if model in self.given:
                out[model] = (type(self.given[model]).__name__.removesuffix("Backend").lower() or "given", 1)
            else:
                out[model] = self.engines.served_by(model)
        return out


def open_session(
    config: RunConfig,
    backends: Mapping[str, Backend] | None = None,
    backend_factory: BackendFactory | None = None,
) -> Session:
    """Read and check everything ``config`` needs before a model loads (with the tokenizers,
    what they alone show: ``Session.refuse_early``), and plan its placement. ``backends``:
    models the caller loaded; ``backend_factory``: how the caller loads the rest (default: from
    the model registry)."""
    given = dict(backends or {})
    judged = read_judged(config)
    models = config.model_names()
    engines = open_engines(config, models, given, backend_factory)
    placement = engines.plan(given)
    session = Session(config, judged.items, judged.panel, models, engines, placement, given, judged.inputs)
    session.refuse_early()
    return session


def open_engines(
    config: RunConfig, models: list[str], given: Mapping[str, Backend], factory: BackendFactory | None
) -> Engines | CallerEngines:
    """What loads the models not ``given``: the caller's ``factory``; else, when any is left to
    load, the registry's engines, read once here and checked (unknown names and settings fail
    before any file is written or model loaded)."""
    if factory is not None:
        return CallerEngines(config, factory)
    if all(m in given for m in models):
        return CallerEngines(config)
    engines = Engines(config, ModelRegistry(config.models_dir))
    engines.check(models)
    return engines
