"""Engine replicas as Ray actors: ``scale.replicas`` copies of a model's vLLM engine, anywhere
in a Ray cluster, fed by this process's streaming scheduler (backends/replicas.py).

Each actor holds the ordinary vLLM backend, built from the run's config exactly as a local
engine is (same engine settings, structured outputs, prefix cache). A replica that needs
several GPUs (tensor or pipeline parallel) gets them on one node through a placement group.
On CPU builds each replica pins its OpenMP threads to its own cores: Ray sets OMP_NUM_THREADS
in workers, and two engines on the same cores would halve each other.
"""

import concurrent.futures
import functools
import os
import uuid
from typing import TYPE_CHECKING, Any

from chateval.backends.replicas import ReplicaSet, ReplicaWorker, StepReport
from chateval.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from chateval.backends.base import Backend, GenerationRequest
    from chateval.config import RunConfig
    from chateval.models import ModelRegistry

ACTOR_PREFIX = "chateval/"  # replica actors are named chateval/MODEL/INDEX/RUN


def _load_replica(config: "RunConfig", model: str, index: int) -> "Backend":
    """Inside the actor: pin this replica's threads (CPU builds), then load the engine as a
    local run would (the config's scale section is dropped: an actor holds one engine)."""
    from chateval.backends import create_backend
    from chateval.config import ScaleConfig
    from chateval.models import ModelRegistry, on_gpu

    scale = config.scale
    if not on_gpu():
        threads = scale.threads_per_replica
        os.environ["OMP_NUM_THREADS"] = str(threads)
        bind = scale.cpu_binds[index % len(scale.cpu_binds)] if scale.cpu_binds else _slice(index, threads)
        os.environ["VLLM_CPU_OMP_THREADS_BIND"] = bind
    local = config.model_copy(update={"scale": ScaleConfig()})
    return create_backend(local, model, ModelRegistry(config.models_dir))


def _slice(index: int, threads: int) -> str:
    """Replica ``index``'s cores on its node: the index-th block of ``threads`` cores."""
    cores = os.cpu_count() or 1
    first = (index * threads) % cores
    last = min(first + threads, cores) - 1
    return str(first) if first == last else f"{first}-{last}"


class RayReplica:
    """The driver's handle on one replica actor."""

    def __init__(self, name: str, actor: Any) -> None:
        self.name = name
        self.actor = actor

    def step(self, new: list[tuple[str, "GenerationRequest"]]) -> "concurrent.futures.Future[StepReport]":
        future: concurrent.futures.Future[StepReport] = self.actor.step.remote(new).future()
        return future

    def close(self) -> None:
        import ray

        try:
            ray.get(self.actor.close.remote(), timeout=60)
        finally:
            ray.kill(self.actor)


def connect(address: str | None) -> None:
    """Join the Ray cluster at ``address`` (``auto``: the one this node belongs to), or start a
    local one when ``address`` is None."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("scale.replicas needs Ray: install chateval[ray] (Ray core only)") from exc
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise BackendError(f"scale.address {address!r}: cannot join the Ray cluster: {exc}") from exc


def start_replicas(config: "RunConfig", model: str, registry: "ModelRegistry", count: int) -> ReplicaSet:
    """``count`` actors, each holding ``model``'s vLLM engine; waits until all have loaded."""
    import ray
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    from chateval.backends import TokenizerOnly
    from chateval.backends.vllm_backend import engine_args, parallel_ranks

    connect(config.scale.address)
    ranks = parallel_ranks(engine_args(model, registry.spec(model), config.vllm))
    # The cluster's GPUs, not this machine's: a driver on a CPU head node feeds GPU workers.
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    gpus = ranks if resources.get("GPU", 0) > 0 else 0
    cpus = config.scale.cpus_per_replica
    remote_worker: Any = ray.remote(ReplicaWorker)
    run_token = uuid.uuid4().hex[:8]  # names stay unique when several runs share a cluster
    actors: list[Any] = []
    for index in range(count):
        options: dict[str, Any] = {
            "num_cpus": cpus,
            "num_gpus": gpus,
            "name": f"{ACTOR_PREFIX}{model}/{index}/{run_token}",
            "max_restarts": 0,  # a dead replica stops the run; resuming starts fresh ones
        }
        if gpus > 1:  # all of one replica's GPUs on one node
            group = placement_group([{"CPU": cpus, "GPU": gpus}], strategy="STRICT_PACK")
            ray.get(group.ready(), timeout=config.scale.start_timeout_s)
            options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(placement_group=group)
        loader = functools.partial(_load_replica, config, model, index)
        actors.append(remote_worker.options(**options).remote(loader))
    try:
        nodes = ray.get([actor.node.remote() for actor in actors], timeout=config.scale.start_timeout_s)
    except Exception as exc:
        for actor in actors:
            ray.kill(actor)
        raise BackendError(f"model {model!r}: its {count} replicas did not start: {exc}") from exc
    handles = [RayReplica(f"ray actor {i}", actor) for i, actor in enumerate(actors)]
    return ReplicaSet(model, handles, nodes, TokenizerOnly(model, registry))
