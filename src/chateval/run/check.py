"""``chateval check CONFIG``: everything a run would refuse, found before a GPU is spent, and
what the run will cost.

It takes a run's session stage by stage, each failure a problem line rather than the end: it
reads the items, builds the panel, resolves every model (a registry name, a folder, a cached
hub id), checks the backend settings against the models that use them, loads each local
model's tokenizer and config (never its weights), and runs the session's prepare stage, the
checks a run makes once its engines are up: the soft verdicts' score tokens, and every item
fitted to every model's context. Each problem is one line; a config with none gets its size:
items, debates, requests by model and kind, the prompt tokens of those requests counted with
the real tokenizers, and the most tokens the referees may generate.

The prompt tokens are counted on the debates' own structure with every earlier utterance left
out (``chateval preview``'s placeholders): a lower bound, which the generated tokens quoted in
later turns raise by at most the generated bound times the turns that quote them.
"""

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar
from urllib.parse import urlsplit

from chateval.config.run import RunConfig
from chateval.core import file_access
from chateval.core.backend import TokenCounter
from chateval.core.items import Item
from chateval.core.model_spec import on_gpu, runtime_dtype
from chateval.core.transcript import Debate
from chateval.debate.building import build_debates, build_panel, check_debatable, load_run_items
from chateval.debate.panel import Panel
from chateval.debate.preview import preview_debate
from chateval.engines.factory import Engines
from chateval.engines.gpu_memory import (
    EngineMemory,
    describe_engine_memory,
    gpu_engine_memory,
    this_gpu_gib,
    too_small,
)
from chateval.engines.models import ModelRegistry, kv_bytes_per_token
from chateval.errors import ChatEvalError
from chateval.offline import summary as offline_summary
from chateval.run.session import Session

T = TypeVar("T")


@dataclass
class CheckReport:
    """What ``check`` found: the problems (empty: the config is ready) and the run's size."""

    problems: list[str] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)  # model -> where it runs from
    items: int = 0
    debates: int = 0
    requests: Counter[str] = field(default_factory=Counter)  # "model: kind" -> requests
    prompt_tokens: Counter[str] = field(default_factory=Counter)  # model -> tokens (lower bound)
    generated_bound: Counter[str] = field(default_factory=Counter)  # model -> most tokens
    adaptive_budget: int | None = None  # the adaptive design debates at most this many items
    gpu_gib: float | None = None  # the GPU the vLLM engines were sized for
    gpu_given: bool = False  # gpu_gib came from --gpu-memory, not from this machine
    placement: str = ""  # the placement on that GPU, and why
    engines: list[EngineMemory] = field(default_factory=list)  # each vLLM engine's part of it
    network: list[str] = field(default_factory=list)  # what the run reaches beyond this machine

    def attempt(self, step: Callable[[], T]) -> T | None:
        """Run one check; a refusal becomes a problem line instead of ending the check."""
        try:
            return step()
        except ChatEvalError as exc:
            self.problems.append(str(exc))
            return None


def check(config: RunConfig, gpu_gib: float | None = None) -> CheckReport:
    """Check ``config`` against its data and models without loading any weights.

    ``gpu_gib`` sizes the vLLM engines' KV caches for a GPU of that much memory (default: this
    machine's GPU, if it has one).
    """
    report = CheckReport()
    items = report.attempt(lambda: load_run_items(config))
    report.attempt(lambda: check_debatable(config))
    panel = report.attempt(lambda: build_panel(config))
    registry = report.attempt(lambda: ModelRegistry(config.models_dir))
    if registry is None:
        return report
    engines = Engines(config, registry)
    models = config.model_names()
    resolved = [m for m in models if report.attempt(partial(_where, engines, m, report))]
    if len(resolved) < len(models):
        # The settings and tokenizers of a model that is not there mean nothing; the run's size
        # without token counts does (a config checked before the model folders are copied).
        if items is not None and panel is not None:
            _size(report, items, build_debates(items, config.calibrated), panel, {})
            report.adaptive_budget = _adaptive_budget(config, report.items)
        report.gpu_gib = gpu_gib if gpu_gib is not None else this_gpu_gib()
        report.gpu_given = gpu_gib is not None
        return report
    report.attempt(lambda: engines.check(models))
    served = engines.remote()
    report.network = _network(engines, models)
    report.gpu_gib = gpu_gib if gpu_gib is not None else this_gpu_gib()
    if report.gpu_gib is not None:
        local = [m for m in models if m not in served]
        report.attempt(lambda: _size_gpu(report, engines, local))
    counters: dict[str, TokenCounter] = {}
    for model in models:
        counter = None if model in served else report.attempt(partial(engines.tokenizer, model))
        if counter is not None:
            counters[model] = counter
    if items is None or panel is None or len(counters) < len(models) - len(served):
        return report
    # Everything read: the run's own session, whose prepare stage checks the soft verdicts'
    # score tokens and fits every item to every model's context, as the run will.
    session = report.attempt(lambda: Session(config, items, panel, models, engines, engines.plan({})))
    prepared = report.attempt(lambda: session.prepare(counters)) if session is not None else None
    if prepared is None:
        return report
    for model, text in prepared.system_prompts.items():
        report.models[model] += f"; an empty system message replaces its template's own ({text!r})"
    _size(report, prepared.items, prepared.debates, panel, counters)
    report.adaptive_budget = _adaptive_budget(config, report.items)
    return report


def _adaptive_budget(config: RunConfig, items: int) -> int | None:
    """The comparisons an adaptive design debates at most (None: no adaptive design)."""
    adaptive = config.data.design().adaptive
    return None if adaptive is None else min(adaptive.budget, items)


def _network(engines: Engines, models: Sequence[str]) -> list[str]:
    """Every address the run will reach beyond this machine's loopback: the servers of served
    models and the Ray cluster it joins."""
    config = engines.config
    reached = []
    for model in models:
        spec = engines.registry.spec(model)
        if engines.kind(model).served and spec.server is not None:
            url = spec.server.base_url
            here = urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")
            reached.append(f"{url} (model {model}{', this machine' if here else ''})")
    uses_ray = any(engines.replicas(m) > 1 for m in models)
    if uses_ray and config.scale.address is not None:
        reached.append(f"the Ray cluster at {config.scale.address}")
    elif uses_ray:
        reached.append("a Ray instance of its own on 127.0.0.1 (this machine)")
    return reached


def privacy_line(report: CheckReport, outdir: str) -> str:
    """One line on what leaves the machine and who may read what the run writes."""
    network = "; ".join(report.network) if report.network else "none (local models only)"
    return f"  stays here: network {network}; {offline_summary()}; writes {outdir}: {file_access.describe()}"


def _size_gpu(report: CheckReport, engines: Engines, models: list[str]) -> None:
    """What each vLLM engine would get of the GPU; a share that holds no whole sequence is a problem."""
    assert report.gpu_gib is not None
    placement, report.engines = gpu_engine_memory(engines, models, report.gpu_gib)
    report.placement = f"{placement.mode} ({placement.reason})"
    report.problems += [too_small(e, report.gpu_gib) for e in report.engines if not e.fits_one_sequence]


def _where(engines: Engines, model: str, report: CheckReport) -> bool:
    """Resolve ``model`` and say where it runs from; raises what a run would."""
    spec = engines.registry.spec(model)
    kind = engines.kind(model)
    if kind.served:
        report.models[model] = f"served at {spec.server.base_url if spec.server else '?'}"
        return True
    folder = engines.registry.resolve(model, prepare=False)
    where = f"{kind.name}, {folder}, context {spec.max_model_len} tokens"
    gpu = on_gpu()
    per_token = kv_bytes_per_token(folder, runtime_dtype(spec.dtype, gpu))
    if per_token is not None:
        where += f"; KV cache {per_token / 1024:,.1f} KiB a token"
        if kind.preallocates and not gpu:  # the CPU build's cache is a set size
            space = engines.config.vllm.cpu_kvcache_space_gib
            where += f" ({space} GiB, vllm.cpu_kvcache_space_gib: {space * 2**30 // per_token:,} tokens)"
    report.models[model] = where
    return True


def _size(
    report: CheckReport,
    items: Sequence[Item],
    debates: Sequence[Debate],
    panel: Panel,
    counters: Mapping[str, TokenCounter],
) -> None:
    """Count the requests and tokens of every debate (placeholders for earlier words)."""
    report.items, report.debates = len(items), len(debates)
    for debate in debates:
        for request in preview_debate(panel, debate):
            report.requests[f"{request.model}: {request.kind}"] += 1
            report.generated_bound[request.model] += request.max_tokens
            counter = counters.get(request.model)
            if counter is not None:
                report.prompt_tokens[request.model] += counter.count_prompt_tokens(request.messages)


def render_known(report: CheckReport) -> str:
    """What a check that found problems still knows: the run's size without token counts, and
    whether this machine has a GPU; empty when the items or panel could not be read."""
    if not report.debates:
        return ""
    if report.gpu_given:
        gpu = f"sized for a {report.gpu_gib:g} GiB GPU (--gpu-memory)"
    elif report.gpu_gib is not None:
        gpu = f"a {report.gpu_gib:.0f} GiB GPU visible here"
    else:
        gpu = "no GPU visible here (vLLM's CPU build, or transformers, runs the models)"
    lines = [
        f"  known without those: {report.items} items, {report.debates} debates, "
        f"{sum(report.requests.values())} requests; {gpu}",
        *_adaptive_lines(report),
        *(f"    {key}: {count}" for key, count in sorted(report.requests.items())),
    ]
    return "\n".join(lines) + "\n"


def _adaptive_lines(report: CheckReport) -> list[str]:
    """An adaptive design's share of the counts (they count every candidate comparison)."""
    if report.adaptive_budget is None:
        return []
    return [
        f"  adaptive design: at most {report.adaptive_budget} of these {report.items} candidate "
        f"comparisons are debated, about {report.adaptive_budget / report.items:.0%} of every count"
    ]


def render_check(name: str, report: CheckReport) -> str:
    """A ready config's check as text: its models, what stays on this machine, its size."""
    lines = [f"{name}: ready to run"]
    lines += [f"  model {model}: {where}" for model, where in report.models.items()]
    lines.append(privacy_line(report, f"runs/{name}/ (or -o)"))
    lines.append(
        f"  {report.items} items, {report.debates} debates, {sum(report.requests.values())} requests"
    )
    lines += _adaptive_lines(report)
    lines += [f"    {key}: {count}" for key, count in sorted(report.requests.items())]
    if report.engines:
        lines.append(
            f"  on a {report.gpu_gib:g} GiB GPU, {report.placement}, each vLLM engine gets (before "
            "the activation memory vLLM measures at start-up, so the caches are upper bounds):"
        )
        lines += [f"    {describe_engine_memory(engine)}" for engine in report.engines]
    for model in report.models:
        if model in report.generated_bound:
            counted = (
                f"{report.prompt_tokens[model]:,} prompt tokens without the debate's own words"
                if model in report.prompt_tokens
                else "prompt tokens counted by its server"
            )
            lines.append(f"  {model}: {counted}; at most {report.generated_bound[model]:,} generated")
    return "\n".join(lines) + "\n"
