"""The default system prompts chat templates would add, which chateval replaces by an empty
system message (chateval.core.chat_template): found per model, said at the start of a run,
kept in roster.json, and shown by ``chateval preview``."""

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace

from chateval.config.run import RunConfig
from chateval.core.backend import sent_messages
from chateval.core.chat_template import folder_template, injected_system_prompt
from chateval.debate.preview import PreviewRequest
from chateval.engines.models import ModelRegistry
from chateval.errors import ConfigError

log = logging.getLogger(__name__)


def replaced_system_prompts(counters: Mapping[str, object]) -> dict[str, str]:
    """Model -> the default system prompt its chat template would add to a chat without one,
    for the models whose requests are sent with an empty system message instead."""
    out = {}
    for model, counter in counters.items():
        read = getattr(counter, "replaced_system_prompt", None)  # counters holding a tokenizer
        if callable(read) and (text := read()):
            out[model] = str(text)
    return out


def log_replaced(replaced: Mapping[str, str]) -> None:
    """One line per model whose template's default system prompt is replaced."""
    for model, text in replaced.items():
        log.info(
            "%s: its chat template adds a system prompt (%r) to a chat that has none; chateval "
            "sends an empty system message instead, as the paper sent none "
            "(template_system_prompt: keep in the model registry lets the template add it)",
            model,
            _shortened(text),
        )


def _shortened(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def template_prompts(config: RunConfig) -> tuple[dict[str, str | None], list[str]]:
    """For ``chateval preview``: each model's replaced system prompt (None: none), read from its
    registry entry or folder (nothing is prepared or loaded), and the models whose chat template
    could not be read (no folder ready, or served without one)."""
    found: dict[str, str | None] = {}
    unread = []
    try:
        registry = ModelRegistry(config.models_dir)
    except ConfigError:
        return found, config.model_names()
    for model in config.model_names():
        try:
            spec = registry.spec(model)
            if spec.path is None:
                raise ConfigError(f"{model}: served without a local folder")
            folder = registry.resolve(model, prepare=False)
        except ConfigError:
            unread.append(model)
            continue
        if spec.keeps_template_system_prompt:
            found[model] = None
        else:
            found[model] = injected_system_prompt(spec.chat_template or folder_template(folder))
    return found, unread


def requests_as_sent(
    requests: Sequence[PreviewRequest], prompts: Mapping[str, str | None]
) -> list[PreviewRequest]:
    """``requests`` with each one's messages as its model gets them."""
    return [replace(r, messages=sent_messages(r.messages, prompts.get(r.model))) for r in requests]


def preview_notes(prompts: Mapping[str, str | None], unread: Sequence[str]) -> list[str]:
    """What the preview says about system prompts before its requests."""
    notes = [
        f"# {model}: its chat template would add a system prompt ({_shortened(text)!r}) to a chat "
        "without one; the empty system message below is sent instead"
        for model, text in prompts.items()
        if text is not None
    ]
    notes += [
        f"# {model}: chat template not read (no local folder ready): a default system prompt it "
        "may add is not shown"
        for model in unread
    ]
    return notes
