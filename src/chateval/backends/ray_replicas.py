"""Engine replicas as Ray actors: ``scale.replicas`` copies of a model's vLLM engine, anywhere
in a Ray cluster, fed by this process's streaming scheduler (backends/replicas.py).

Each actor holds the ordinary vLLM backend, built from the run's config exactly as a local
engine is (same engine settings, structured outputs, prefix cache). A replica that needs
several GPUs (tensor or pipeline parallel) gets them on one node through a placement group.
On CPU builds each replica pins its OpenMP threads to its own cores: Ray sets OMP_NUM_THREADS
in workers, and two engines on the same cores would halve each other.
"""

import concurrent.futures
import fcntl
import functools
import os
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chateval.backends.replicas import ReplicaSet, ReplicaWorker, StepReport
from chateval.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from chateval.config import RunConfig
    from chateval.core.backend import Backend, GenerationRequest
    from chateval.engines.models import ModelRegistry

ACTOR_PREFIX = "chateval/"  # replica actors are named chateval/MODEL/INDEX/RUN


def _load_replica(config: "RunConfig", model: str, run_token: str, ranks: int) -> "Backend":
    """Inside the actor: pin this replica's threads (CPU builds), then load the engine as a
    local run would (the config's scale section is dropped: an actor holds one engine)."""
    from chateval.backends.vllm_backend import _core_lists
    from chateval.config import ScaleConfig
    from chateval.core.model_spec import on_gpu
    from chateval.engines.factory import create_backend
    from chateval.engines.models import ModelRegistry

    scale = config.scale
    if not on_gpu():
        threads = scale.threads_per_replica
        os.environ["OMP_NUM_THREADS"] = str(max(1, threads // ranks))
        slot = node_slot(run_token)  # replicas of one run on one node never share cores
        if scale.cpu_binds:
            bind = scale.cpu_binds[slot % len(scale.cpu_binds)]
        else:  # the slot-th block of this node's cores, one list per rank (vLLM's "0-1|2-3")
            cores = os.cpu_count() or 1
            first = (slot * threads) % cores
            block = _core_lists(min(threads, cores - first), ranks)
            bind = "|".join(_shift(part, first) for part in block.split("|"))
        os.environ["VLLM_CPU_OMP_THREADS_BIND"] = bind
    local = config.model_copy(update={"scale": ScaleConfig()})
    return create_backend(local, model, ModelRegistry(config.models_dir))


def node_slot(run_token: str, folder: Path | None = None) -> int:
    """This replica's rank among the run's replicas on this node (0, 1, ...): a counter in a
    small file of the node's temp folder, taken under a lock, since replicas start at once and
    Ray decides their nodes."""
    path = (folder or Path(tempfile.gettempdir())) / f"chateval-replicas-{run_token}"
    with path.open("a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        taken = int(handle.read() or 0)
        handle.seek(0)
        handle.truncate()
        handle.write(str(taken + 1))
    return taken


def _shift(cores: str, offset: int) -> str:
    """A core range (``2`` or ``0-3``) moved up by ``offset``."""
    return "-".join(str(int(end) + offset) for end in cores.split("-"))


class RayReplica:
    """The driver's handle on one replica actor."""

    def __init__(self, name: str, actor: Any, group: Any = None) -> None:
        self.name = name
        self.actor = actor
        self.group = group  # its placement group (multi-GPU replicas), removed on close

    def step(self, new: list[tuple[str, "GenerationRequest"]]) -> "concurrent.futures.Future[StepReport]":
        future: concurrent.futures.Future[StepReport] = self.actor.step.remote(new).future()
        return future

    def close(self) -> None:
        import ray

        try:
            ray.get(self.actor.close.remote(), timeout=60)
        finally:
            ray.kill(self.actor)
            if self.group is not None:
                from ray.util.placement_group import remove_placement_group

                remove_placement_group(self.group)


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

    from chateval.backends.vllm_backend import engine_args, parallel_ranks
    from chateval.engines.factory import TokenizerOnly

    connect(config.scale.address)
    ranks = parallel_ranks(engine_args(model, registry.spec(model), config.vllm))
    # The cluster's GPUs, not this machine's: a driver on a CPU head node feeds GPU workers.
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    gpus = ranks if resources.get("GPU", 0) > 0 else 0
    cpus = config.scale.cpus_per_replica
    # The actors load the registry themselves, wherever Ray starts them: give them its folder.
    config = config.model_copy(update={"models_dir": registry.models_dir})
    remote_worker: Any = ray.remote(ReplicaWorker)
    run_token = uuid.uuid4().hex[:8]  # names stay unique when several runs share a cluster
    actors: list[Any] = []
    groups: list[Any] = []
    try:
        for index in range(count):
            options: dict[str, Any] = {
                "num_cpus": cpus,
                "num_gpus": gpus,
                "name": f"{ACTOR_PREFIX}{model}/{index}/{run_token}",
                "max_restarts": 0,  # a dead replica stops the run; resuming starts fresh ones
            }
            if gpus > 1:
                # All of one replica's GPUs on one node, one GPU per bundle as vLLM's Ray
                # executor wants; the engine's actor sits in bundle 0 and vLLM starts its rank
                # workers in the GPU bundles.
                group = placement_group([{"CPU": cpus}] + [{"GPU": 1}] * gpus, strategy="STRICT_PACK")
                groups.append(group)
                options["num_gpus"] = 0
                options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                    placement_group=group,
                    placement_group_bundle_index=0,
                    placement_group_capture_child_tasks=True,
                )
            loader = functools.partial(_load_replica, config, model, run_token, ranks)
            actors.append(remote_worker.options(**options).remote(loader))
        nodes = ray.get([actor.node.remote() for actor in actors], timeout=config.scale.start_timeout_s)
        counter = TokenizerOnly(model, registry)
    except Exception as exc:
        _clean_up(actors, groups)
        raise BackendError(f"model {model!r}: its {count} replicas did not start: {exc}") from exc
    handles = [
        RayReplica(f"ray actor {i}", actor, groups[i] if groups else None) for i, actor in enumerate(actors)
    ]
    return ReplicaSet(model, handles, nodes, counter, config.scale.stall_timeout_s)


def _clean_up(actors: list[Any], groups: list[Any]) -> None:
    """Kill ``actors`` and free ``groups`` after a failed start."""
    import ray
    from ray.util.placement_group import remove_placement_group

    for actor in actors:
        ray.kill(actor)
    for group in groups:
        remove_placement_group(group)
