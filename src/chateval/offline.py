"""Keeps chateval's processes off the network: telemetry off, Hugging Face hub look-ups off.

The package imports this module first (``chateval/__init__.py``), before any dependency, and
``switch_off()`` writes the settings into this process's environment. Every process chateval
starts inherits them: vLLM's engine core and workers, a local Ray instance's daemons and
workers, the ``vllm serve`` and ``ray start`` of the tests; every process that imports chateval
(a Ray actor that unpickles a replica's loader) switches them on by itself. Ray actors also get
them through their runtime environment (backends/ray_replicas.py), which the workers vLLM starts
for a multi-GPU replica inherit: they hold on a cluster whose nodes were started without them.

What each setting stops (found in each dependency's own code):

- vLLM reports the hardware, model architecture and engine settings to its usage server at
  start and every ten minutes (``vllm/usage/usage_lib.py``) unless one of ``VLLM_NO_USAGE_STATS``,
  ``VLLM_DO_NOT_TRACK`` or ``DO_NOT_TRACK`` is set.
- Ray collects usage statistics by default and its dashboard reports them hourly
  (``ray/_common/usage/usage_lib.py``): ``RAY_USAGE_STATS_ENABLED=0``. With them off, a
  cluster started by ``ray start`` still posts one "disabled" notice to Ray's usage server:
  ``RAY_USAGE_STATS_REPORT_URL`` sends it to a closed port on loopback instead.
- huggingface_hub sends telemetry with hub requests: ``HF_HUB_DISABLE_TELEMETRY``; its and
  transformers' command-line tools ask PyPI for updates once a day: ``HF_HUB_DISABLE_UPDATE_CHECK``.
- transformers asks a hub Space to convert a hub model's ``.bin`` weights to safetensors, in
  a thread of its own: ``DISABLE_SAFETENSORS_CONVERSION``.
- pyarrow's S3 file system (never used by chateval, which reads local files) would ask the
  cloud metadata address for credentials: ``AWS_EC2_METADATA_DISABLED``.
- transformers, huggingface_hub and datasets look files up on the hub (tokenizer files, chat
  templates, a hub id's newest revision): ``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE``,
  ``HF_DATASETS_OFFLINE`` make them read the local cache only. ``CHATEVAL_HUB_LOOKUPS=1``
  leaves these three unset (models are still never downloaded by chateval itself).

torch, outlines, outlines_core, tokenizers, triton, rich and typer make no network calls of
their own at import or in the paths chateval uses (no update checks, no telemetry).

vLLM finds "this host's address" with a UDP ``connect`` to 8.8.8.8 (then 2001:4860:4860::8888),
a route look-up that sends no packet but that a strict firewall or an audit log sees as an
attempt to reach a public address (``get_ip`` in ``vllm/utils/network_utils.py``), unless
``VLLM_HOST_IP`` names it. Its multiprocess executor asks at every start, which is every
``vllm serve`` on a CPU build (the engine core) and every engine of several ranks; so does its
Ray executor, for a replica's GPU workers. ``VLLM_HOST_IP=127.0.0.1`` keeps the look-up on
loopback: right wherever an engine's processes share one node, as chateval's engines and
replicas (one placement group on one node) and a ``vllm serve`` for this machine do. A value
the shell has is kept in chateval's own process (it names this host, and asks nothing), and
``chateval env --ray`` leaves it out: a node of a cluster across hosts has its own address.

What no setting stops: Ray's dashboard, which every Ray head starts (even with
``include_dashboard=False``, for its usage-statistics module), asks the cloud metadata service
(169.254.169.254, and metadata.google.internal through DNS) which cloud it runs on, with usage
statistics on or off (``get_cloud_from_metadata_requests``). ``RAY_DAEMONS_HTTP_OFF`` sends the
HTTP of Ray's daemons to a closed port on loopback: chateval starts its own local Ray instance
with it, and ``chateval env --ray`` prints it for ``ray start``. Ray's own traffic is gRPC,
which ignores proxy settings unless ``RAY_grpc_enable_http_proxy`` is set.
"""

import os
import sys

HUB_OPT_IN = "CHATEVAL_HUB_LOOKUPS"
# A closed port on loopback: what is sent there goes nowhere (connection refused at once).
NOWHERE = "http://127.0.0.1:9"

TELEMETRY_OFF: dict[str, str] = {
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_DO_NOT_TRACK": "1",
    "DO_NOT_TRACK": "1",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_USAGE_STATS_REPORT_URL": NOWHERE,
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    "DISABLE_SAFETENSORS_CONVERSION": "1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
HUB_OFF: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
}

_LOOPBACK = "127.0.0.1,localhost,::1"
RAY_DAEMONS_HTTP_OFF: dict[str, str] = {
    "http_proxy": NOWHERE,
    "https_proxy": NOWHERE,
    "HTTP_PROXY": NOWHERE,
    "HTTPS_PROXY": NOWHERE,
    "no_proxy": _LOOPBACK,
    "NO_PROXY": _LOOPBACK,
}

# Where vLLM's processes find each other (see the module's docstring): on this node.
LOOPBACK_HOST: dict[str, str] = {"VLLM_HOST_IP": "127.0.0.1"}

# The names a person reads in `chateval check` and the docs.
TELEMETRY_NAMES = ("vLLM usage stats", "Ray usage stats", "Hugging Face telemetry")


def hub_lookups_allowed() -> bool:
    """Whether the user opted in to Hugging Face hub look-ups (``CHATEVAL_HUB_LOOKUPS=1``)."""
    return os.environ.get(HUB_OPT_IN, "").strip().lower() in ("1", "true", "yes")


def environment(ray_daemons: bool = False) -> dict[str, str]:
    """The settings chateval gives every process it starts or joins, ``LOOPBACK_HOST``
    included; with ``ray_daemons``, for a Ray node's daemons, ``RAY_DAEMONS_HTTP_OFF`` instead
    of ``LOOPBACK_HOST`` (the proxies would send a served model's requests nowhere too, and a
    node of a cluster across hosts is reached at its own address)."""
    return {
        **TELEMETRY_OFF,
        **({} if hub_lookups_allowed() else HUB_OFF),
        **(RAY_DAEMONS_HTTP_OFF if ray_daemons else LOOPBACK_HOST),
    }


def switch_off() -> None:
    """Write ``environment()`` into this process's environment, over any value a user set: a
    privacy guarantee that a stray ``DO_NOT_TRACK=0`` could undo would be none. A
    ``VLLM_HOST_IP`` the user set stays: it names this host, and vLLM then asks nothing."""
    settings = environment()
    for name in LOOPBACK_HOST:
        if os.environ.get(name):
            del settings[name]
    os.environ.update(settings)
    # huggingface_hub reads its switches once, at import: a notebook that imported it before
    # chateval gets them set on the module too.
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_DISABLE_TELEMETRY = True  # type: ignore[attr-defined]
        if "HF_HUB_OFFLINE" in settings:
            constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]


def summary() -> str:
    """One line on what is switched off, for ``chateval check``."""
    hub = (
        f"hub look-ups on ({HUB_OPT_IN}=1)"
        if hub_lookups_allowed()
        else "Hugging Face hub look-ups off (local files and cache only)"
    )
    return f"telemetry off ({', '.join(TELEMETRY_NAMES)}); {hub}"
