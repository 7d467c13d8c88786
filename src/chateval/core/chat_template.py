"""What a model's chat template adds on its own: the default system prompt some templates
insert into a chat that has none.

The paper's referees got no system message (each turn is one user message). SmolLM2's template,
given none, inserts "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
Qwen2.5's inserts its own. So a chat without a system message is sent with an empty one where
the template would otherwise add its default (``template_system_prompt: suppress`` in the
model registry, the default), unless the registry entry says ``keep``. Templates that add a
fixed header whatever the chat holds (Llama 3.1's dates) are left as they are: an empty system
message would not remove it.

The template is rendered here with Jinja, as transformers renders it (a sandbox with
``raise_exception`` and ``strftime_now``), so it can be read without loading transformers
(``chateval preview`` reads it from the model's folder).
"""

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import NoReturn

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

_PROBE = "\x00chateval-probe\x00"


def _raise(message: str) -> NoReturn:
    raise jinja2.TemplateError(message)


@cache
def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


def _rendered(template: str, messages: list[dict[str, str]]) -> str:
    return _environment().from_string(template).render(messages=messages, add_generation_prompt=False)


def injected_system_prompt(template: str | None) -> str | None:
    """The text ``template`` adds to a chat with no system message and leaves out when the chat
    starts with an empty one; None when it adds nothing, takes no system message, or there is
    no template."""
    if not template:
        return None
    probe = [{"role": "user", "content": _PROBE}]
    try:
        bare = _rendered(template, probe)
        empty = _rendered(template, [{"role": "system", "content": ""}, *probe])
    except jinja2.TemplateError:  # refuses a system message, or needs what only its model has
        return None
    if len(bare) <= len(empty):
        return None
    # The difference between the two renderings: what lies between their common ends.
    start = next((i for i, (a, b) in enumerate(zip(bare, empty, strict=False)) if a != b), len(empty))
    end = 0
    while end < len(empty) - start and bare[-1 - end] == empty[-1 - end]:
        end += 1
    added = bare[start : len(bare) - end].strip()
    return added or None


def folder_template(folder: Path) -> str | None:
    """The chat template a Hugging Face model folder holds (chat_template.jinja, else
    tokenizer_config.json's ``chat_template``, its default entry when it names several)."""
    own = folder / "chat_template.jinja"
    if own.is_file():
        return own.read_text(encoding="utf-8")
    config = folder / "tokenizer_config.json"
    if not config.is_file():
        return None
    template = json.loads(config.read_text(encoding="utf-8")).get("chat_template")
    if isinstance(template, list):  # named templates: [{"name": ..., "template": ...}]
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    return template if isinstance(template, str) else None
