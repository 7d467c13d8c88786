"""Chat templates that add their own system prompt: chateval sends an empty system message
instead (the paper sent none), per model, unless the registry keeps the template's default.

The default model's real tokenizer renders every template here; the templates besides its own
are small ones written for these tests, each shaped like a real family's."""

import json
from pathlib import Path

import pytest
import yaml

from chateval.core.backend import ChatMessage
from chateval.core.chat_template import folder_template, injected_system_prompt
from chateval.engines.factory import TokenizerOnly
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry

SMOLLM_DEFAULT = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
# Llama 3.1's shape: a system header with fixed lines whatever the chat holds.
FIXED_HEADER = (
    "{{ '<|system|>\\nKnowledge cutoff: 2023\\n' }}"
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}"
    "{% else %}{{ '<|' + m['role'] + '|>\\n' + m['content'] + '\\n' }}{% endif %}{% endfor %}"
)
# Gemma 2's shape: no system role at all.
NO_SYSTEM = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{{ m['content'] }}{% endfor %}"
)
GEMMA_TURNS = (Path(__file__).parents[2] / "models" / "templates" / "gemma_turns.jinja").read_text()


@pytest.mark.slow  # transformers' import: 4 s
def test_the_default_models_injected_prompt_is_found(registry: ModelRegistry) -> None:
    counter = TokenizerOnly(DEFAULT_MODEL, registry)
    assert counter.replaced_system_prompt() == SMOLLM_DEFAULT
    ask = (ChatMessage("user", "Judge this."),)
    assert counter.as_sent(ask) == (ChatMessage("system", ""), *ask)
    rendered = counter.tokenizer.decode(counter.render_ids(ask))
    assert "SmolLM" not in rendered and rendered.startswith("<|im_start|>system\n<|im_end|>")
    # A chat that brings its own system message is sent as it is.
    own = (ChatMessage("system", "Be brief."), *ask)
    assert counter.as_sent(own) == own


@pytest.mark.parametrize(
    "template", [FIXED_HEADER, NO_SYSTEM, GEMMA_TURNS], ids=["fixed", "refused", "gemma"]
)
def test_templates_that_inject_nothing_are_left_alone(template: str) -> None:
    assert injected_system_prompt(template) is None


def test_the_default_models_folder_template_injects(registry: ModelRegistry) -> None:
    """What preview reads (the folder's template, rendered here) finds SmolLM2's prompt."""
    assert injected_system_prompt(folder_template(registry.resolve(DEFAULT_MODEL))) == SMOLLM_DEFAULT


@pytest.mark.slow
def test_the_registry_can_keep_the_templates_prompt(registry: ModelRegistry, tmp_path: Path) -> None:
    folder = registry.resolve(DEFAULT_MODEL)
    entry = {"path": str(folder), "template_system_prompt": "keep"}
    (tmp_path / "registry.yaml").write_text(yaml.safe_dump({"kept": entry}))
    counter = TokenizerOnly("kept", ModelRegistry(tmp_path))
    assert counter.replaced_system_prompt() is None
    ask = (ChatMessage("user", "Judge this."),)
    assert counter.as_sent(ask) == ask
    assert SMOLLM_DEFAULT in counter.tokenizer.decode(counter.render_ids(ask))


def test_a_folders_template_is_read_where_transformers_looks(tmp_path: Path) -> None:
    """chat_template.jinja first, else tokenizer_config.json's entry (its default when named)."""
    assert folder_template(tmp_path) is None
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps(
            {"chat_template": [{"name": "tool_use", "template": "x"}, {"name": "default", "template": "y"}]}
        )
    )
    assert folder_template(tmp_path) == "y"
    config.write_text(json.dumps({"chat_template": "z"}))
    assert folder_template(tmp_path) == "z"
    (tmp_path / "chat_template.jinja").write_text("w")
    assert folder_template(tmp_path) == "w"
