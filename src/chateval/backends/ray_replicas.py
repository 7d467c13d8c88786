"""Engine replicas as Ray actors: ``scale.replicas`` copies of a model's vLLM engine, anywhere
in a Ray cluster, fed by this process's streaming scheduler (backends/replicas.py).

Each actor holds the ordinary vLLM backend, built by a loader the caller gives (the engines'
factory builds it exactly as a local engine: same engine settings, structured outputs, prefix
cache), so this module knows nothing of run configs or the model registry. A replica that needs
several GPUs (tensor or pipeline parallel) gets them on one node through a placement group.
On CPU builds each replica pins its OpenMP threads to its own cores (their number set in its
runtime environment): two engines on the same cores would halve each other.
"""

import atexit
import concurrent.futures
import contextlib
import errno
import fcntl
import functools
import os
import shutil
import signal
import socket
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chateval.backends.replicas import ReplicaSet, ReplicaWorker, StepReport
from chateval.errors import BackendError, ConfigError
from chateval.offline import RAY_DAEMONS_HTTP_OFF
from chateval.offline import environment as offline_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from chateval.core.backend import Backend, GenerationRequest, TokenCounter

ACTOR_PREFIX = "chateval/"  # replica actors are named chateval/MODEL/INDEX/RUN


@dataclass(frozen=True)
class RaySettings:
    """Where the replicas run and how long they may take (the run config's ``scale`` section)."""

    address: str | None = None  # the cluster to join; None: start a local Ray instance
    cpus_per_replica: float = 1.0
    threads_per_replica: int = 1
    cpu_binds: tuple[str, ...] = ()  # CPU builds: the k-th replica on a node takes the k-th
    start_timeout_s: float = 900.0
    stall_timeout_s: float = 600.0


def _load_replica(
    load: "Callable[[], Backend]", settings: RaySettings, run_token: str, ranks: int
) -> "Backend":
    """Inside the actor: pin this replica's threads (CPU builds), then load the engine with
    ``load``, which builds it as a local run would."""
    from chateval.backends.vllm_backend import _core_lists
    from chateval.core.model_spec import on_gpu

    if not on_gpu():  # (OMP_NUM_THREADS came with the process: replica_runtime_env)
        threads = settings.threads_per_replica
        slot, holder = node_slot(run_token)  # replicas of one run on one node never share cores
        _HELD_SLOTS.append(holder)
        if settings.cpu_binds:
            bind = settings.cpu_binds[slot % len(settings.cpu_binds)]
        else:  # the slot-th block of this node's cores, one list per rank (vLLM's "0-1|2-3")
            cores = os.cpu_count() or 1
            first = (slot * threads) % cores
            block = _core_lists(min(threads, cores - first), ranks)
            bind = "|".join(_shift(part, first) for part in block.split("|"))
        os.environ["VLLM_CPU_OMP_THREADS_BIND"] = bind
    return load()


# The sockets that hold this process's core slot (``node_slot``): kept for the actor's life.
_HELD_SLOTS: list[socket.socket] = []


def node_slot(run_token: str) -> tuple[int, socket.socket]:
    """This replica's rank among the run's live replicas on this node (0, 1, ...), and the
    socket that holds it: the lowest ``k`` whose name ``chateval-replicas-TOKEN-k`` is free in
    Linux's abstract socket namespace, where taking a name is atomic (replicas start at once,
    and Ray decides their nodes). The names live in the kernel, not in a folder: each goes when
    its socket closes, at the latest when its process ends, however it ends, so no run leaves
    a file behind, killed or not."""
    slot = 0
    while True:
        holder = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            holder.bind(f"\0chateval-replicas-{run_token}-{slot}")
        except OSError as exc:
            holder.close()
            if exc.errno != errno.EADDRINUSE:
                raise
            slot += 1
        else:
            return slot, holder


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
    local one when ``address`` is None.

    A local instance keeps its session folder (logs, spilled objects: they may hold items'
    text) in a private temporary folder of this process (Ray makes its own folders
    world-writable), removed when the process ends, or by the next command that starts one if
    this process is killed (``private_ray_folder``); its daemons reach no address but loopback
    (``_daemons_off_the_network``). A joined cluster's folders and daemons are its own."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("scale.replicas needs Ray: install chateval[ray] (Ray core only)") from exc
    if ray.is_initialized():
        return
    local: dict[str, Any] = {}
    if address is None:
        remove_abandoned_ray_folders()
        private, owner = private_ray_folder()
        atexit.register(_remove_local_instance, private, owner)
        local = {"_temp_dir": str(private / "ray"), "include_dashboard": False}
    try:
        with _daemons_off_the_network(local_instance=address is None), _keeping_sigterm():
            ray.init(
                address=address,
                log_to_driver=False,
                configure_logging=False,
                runtime_env=offline_runtime_env(),
                **local,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise BackendError(f"scale.address {address!r}: cannot join the Ray cluster: {exc}") from exc


@contextlib.contextmanager
def _keeping_sigterm() -> "Iterator[None]":
    """``ray.init`` puts in SIGTERM handlers of its own (exit at once); the process's own one
    (``chateval run``: stop as on Ctrl-C, with a word) is put back. The local instance is still
    shut down at exit (``_remove_local_instance``)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def offline_runtime_env() -> dict[str, Any]:
    """Ray's runtime environment for chateval's tasks and actors: the settings that keep a
    process off the network (offline.py), whatever the nodes were started with."""
    return {"env_vars": offline_settings()}


@contextlib.contextmanager
def _daemons_off_the_network(local_instance: bool) -> "Iterator[None]":
    """While a local Ray instance starts, the environment its daemons inherit sends HTTP to a
    closed port on loopback (``offline.RAY_DAEMONS_HTTP_OFF``): Ray's dashboard asks the cloud
    metadata service which cloud it runs on whatever the usage setting, and this is the one
    way to keep that on the machine. This process's own environment is restored once the
    daemons have started."""
    if not local_instance:
        yield
        return
    saved = {name: os.environ.get(name) for name in RAY_DAEMONS_HTTP_OFF}
    os.environ.update(RAY_DAEMONS_HTTP_OFF)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def replica_runtime_env(settings: RaySettings, ranks: int) -> dict[str, Any]:
    """A replica actor's process environment, set before it starts:

    - the offline settings, also on nodes started without them, and inherited by the workers
      vLLM starts for a multi-GPU replica (which never import chateval; vLLM reports usage
      from its GPU workers), ``VLLM_HOST_IP=127.0.0.1`` among them: a replica's processes
      share one node (its placement group is packed), so they find each other on loopback;
    - ``OMP_NUM_THREADS``, each rank's share of ``threads_per_replica``: OpenMP reads it once,
      when torch loads, which is before the actor could set it (checking for a GPU loads
      torch). Ray sets it to the actor's CPUs only where the node's environment has none: an
      ``OMP_NUM_THREADS=2`` in the shell that started the cluster made two one-core replicas
      run three times slower."""
    threads = str(max(1, settings.threads_per_replica // ranks))
    return {"env_vars": {**offline_settings(), "OMP_NUM_THREADS": threads}}


def _remove_local_instance(folder: Path, owner: int) -> None:
    """At exit: stop the local Ray instance, then remove its folder and let go of its lock."""
    import ray

    ray.shutdown()
    shutil.rmtree(folder, ignore_errors=True)
    os.close(owner)


LOCAL_RAY_PREFIX = "chateval-ray-"
_OWNER_LOCK = "owner.lock"  # in a local Ray instance's folder: held by the command that made it


def private_ray_folder(temp: Path | None = None) -> tuple[Path, int]:
    """A new folder for a local Ray instance's files in ``temp`` (the temp folder), 0700, and
    the descriptor of the lock its owner (this process) holds on its ``owner.lock`` until it
    ends: the kernel lets go of the lock when the process ends, however it ends. The lock file
    gets its name only once it is held, so a folder whose lock is free is provably abandoned."""
    folder = Path(tempfile.mkdtemp(prefix=LOCAL_RAY_PREFIX, dir=temp))
    taking = folder / f"{_OWNER_LOCK}.new"
    owner = os.open(taking, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    fcntl.flock(owner, fcntl.LOCK_EX)
    taking.rename(folder / _OWNER_LOCK)
    return folder, owner


def remove_abandoned_ray_folders(temp: Path | None = None) -> list[Path]:
    """Remove the folders that local Ray instances of killed chateval commands left in ``temp``
    (the temp folder), and return them: only this user's folders named ``chateval-ray-*``
    whose ``owner.lock`` nobody holds (``private_ray_folder``). A folder without that lock
    (another program's, or one being made now) stays."""
    removed = []
    for folder in sorted(Path(temp or tempfile.gettempdir()).glob(f"{LOCAL_RAY_PREFIX}*")):
        try:
            if not folder.is_dir() or folder.is_symlink() or folder.stat().st_uid != os.getuid():
                continue
            lock = os.open(folder / _OWNER_LOCK, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its command still runs
            continue
        else:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(lock)
    return removed


def start_replicas(
    model: str,
    count: int,
    ranks: int,
    settings: RaySettings,
    load: "Callable[[], Backend]",
    tokenizer: "Callable[[], TokenCounter]",
) -> ReplicaSet:
    """``count`` actors, each holding one engine of ``model`` that ``load`` builds inside the
    actor (it must pickle: Ray ships it to wherever the actor starts) with ``ranks`` devices
    or rank workers; waits until all have loaded. ``tokenizer`` gives this process the
    model's token counting."""
    import ray
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    connect(settings.address)
    # The cluster's GPUs, not this machine's: a driver on a CPU head node feeds GPU workers.
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]  # Ray's API is untyped
    gpus = ranks if resources.get("GPU", 0) > 0 else 0
    cpus = settings.cpus_per_replica
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
                "runtime_env": replica_runtime_env(settings, ranks),
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
            loader = functools.partial(_load_replica, load, settings, run_token, ranks)
            actors.append(remote_worker.options(**options).remote(loader))
        nodes = ray.get([actor.node.remote() for actor in actors], timeout=settings.start_timeout_s)
        counter = tokenizer()
    except Exception as exc:
        _clean_up(actors, groups)
        raise BackendError(f"model {model!r}: its {count} replicas did not start: {exc}") from exc
    handles = [
        RayReplica(f"ray actor {i}", actor, groups[i] if groups else None) for i, actor in enumerate(actors)
    ]
    return ReplicaSet(model, handles, nodes, counter, settings.stall_timeout_s)


def _clean_up(actors: list[Any], groups: list[Any]) -> None:
    """Kill ``actors`` and free ``groups`` after a failed start."""
    import ray
    from ray.util.placement_group import remove_placement_group

    for actor in actors:
        ray.kill(actor)
    for group in groups:
        remove_placement_group(group)
