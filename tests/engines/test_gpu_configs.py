"""configs/gpu/: the 7-8B panels pass ``chateval check`` when their folders exist, and the check
sizes each vLLM engine's part of a GPU.

Two kinds of stand-in folders, made here (no 8B weights are downloaded):
- tiny random-weight models of the same architectures (Llama, Qwen2, Mistral) with the
  default model's tokenizer: real folders that load, for the check of the configs;
- folders with each real model's shape (its config.json values) and a sparse safetensors file
  of its bfloat16 size, which takes no disk: for the GPU memory arithmetic, which reads only
  the shape and the file size.
"""

import shutil
from pathlib import Path

import pytest

from chateval.config.files import load_config
from chateval.engines.factory import Engines
from chateval.engines.gpu_memory import gpu_engine_memory
from chateval.engines.models import ModelRegistry
from chateval.run.check import check, render_check
from tests.support.helpers import CONFIGS_DIR, MODELS_DIR, ROOT

GPU_CONFIGS = CONFIGS_DIR / "gpu"
FAIREVAL = ROOT.parent / "shared" / "datasets" / "faireval"
GIB = 2**30

# Each model's architecture, shape and parameter count as its model card and config.json give them.
SHAPES = {
    "llama-3.1-8b-instruct": ("LlamaForCausalLM", "llama", 32, 32, 8, 4096, 8_030_261_248),
    "qwen2.5-7b-instruct": ("Qwen2ForCausalLM", "qwen2", 28, 28, 4, 3584, 7_615_616_512),
    "mistral-7b-instruct-v0.3": ("MistralForCausalLM", "mistral", 32, 32, 8, 4096, 7_248_023_552),
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def _registry_file(models_dir: Path) -> None:
    entries = "".join(f"{name}:\n  path: {name}\n  dtype: auto\n  max_model_len: 8192\n" for name in SHAPES)
    (models_dir / "registry.yaml").write_text(entries, encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny random-weight models of the configs' three architectures, with SmolLM2's tokenizer."""
    tokenizer = MODELS_DIR / "smollm2-135m"
    if not (tokenizer / "tokenizer.json").is_file():
        pytest.skip("the default model is not prepared (bash scripts/setup.sh)")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    models_dir = tmp_path_factory.mktemp("gpu_models")
    torch.manual_seed(0)
    for name, (_arch, model_type, _layers, _heads, _kv, _hidden, _params) in SHAPES.items():
        config = AutoConfig.for_model(
            model_type,
            vocab_size=49152,  # the tokenizer's
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=8192,
        )
        AutoModelForCausalLM.from_config(config).save_pretrained(models_dir / name)
        for file in TOKENIZER_FILES:
            shutil.copy(tokenizer / file, models_dir / name / file)
    _registry_file(models_dir)
    return models_dir


@pytest.fixture(scope="module")
def shaped_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each real model's shape and a sparse weights file of its bfloat16 size."""
    import json

    models_dir = tmp_path_factory.mktemp("gpu_shapes")
    for name, (arch, model_type, layers, heads, kv_heads, hidden, params) in SHAPES.items():
        folder = models_dir / name
        folder.mkdir()
        config = {
            "architectures": [arch],
            "model_type": model_type,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "num_key_value_heads": kv_heads,
            "hidden_size": hidden,
            "torch_dtype": "bfloat16",
        }
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        with open(folder / "model.safetensors", "wb") as weights:
            weights.truncate(2 * params)  # sparse: the size is read, never the bytes
    _registry_file(models_dir)
    return models_dir


@pytest.mark.slow  # counts the prompts of 80 and 48 items with a real tokenizer (6 s)
@pytest.mark.parametrize("name", ["faireval_panel_8b", "systems_8b"])
def test_the_gpu_configs_pass_check(tiny_models: Path, name: str) -> None:
    if not FAIREVAL.is_dir():
        pytest.skip(f"FairEval not found at {FAIREVAL}")
    # The panel on all 80 questions; the tournament on its first 8 (6 pairs of 4 systems on
    # each: 48 of its 480 comparisons): counting all of them takes 20 s and checks nothing more.
    questions, items = (80, 80) if name == "faireval_panel_8b" else (8, 48)
    overrides = [f"models_dir={tiny_models}", f"data.limit={questions}"]
    config = load_config(GPU_CONFIGS / f"{name}.yaml", overrides)
    report = check(config, gpu_gib=80)
    assert report.problems == []
    referees = len(config.agents)
    assert (report.items, report.debates) == (items, 2 * items)
    # Per debate, each referee: its turn of round 1, then in the last round its assessment and
    # its scores.
    assert sum(report.requests.values()) == 2 * items * referees * 3
    assert [engine.model for engine in report.engines] == [a.model for a in config.agents]
    assert report.placement.startswith("co_resident")
    said = render_check(name, report)
    assert "on a 80 GiB GPU, co_resident" in said


def test_three_8b_engines_share_an_80_gib_gpu(shaped_models: Path) -> None:
    config = load_config(GPU_CONFIGS / "faireval_panel_8b.yaml", [f"models_dir={shaped_models}"])
    registry = ModelRegistry(shaped_models)
    placement, engines = gpu_engine_memory(Engines(config, registry), list(SHAPES), 80.0)
    # The arithmetic, written out: bfloat16 weights; an engine's estimated need is its weights
    # x 1.2 plus 1 GiB; three needs of about 54 GiB fit in 80% of 80 GiB, so co-resident; each
    # engine gets 0.85 x its need / all needs, rounded to 3 places, of the 80 GiB.
    weights = {name: 2 * shape[6] / GIB for name, shape in SHAPES.items()}
    needs = {name: w * 1.2 + 1.0 for name, w in weights.items()}
    assert sum(needs.values()) == pytest.approx(54.17, abs=0.01)
    assert placement.mode == "co_resident"
    for engine in engines:
        _arch, _type, layers, heads, kv_heads, hidden, _params = SHAPES[engine.model]
        share = round(0.85 * needs[engine.model] / sum(needs.values()), 3)
        cache = share * 80 - weights[engine.model]
        per_token = 2 * layers * kv_heads * (hidden // heads) * 2
        assert engine.share == share
        assert engine.weights_gib == pytest.approx(weights[engine.model])
        assert engine.tokens == int(cache * GIB // per_token)
        assert engine.fits_one_sequence
    by_model = {e.model: e for e in engines}
    # Llama 3.1 8B: 128 KiB of KV cache a token; its 0.297 share leaves at most 8.8 GiB.
    assert by_model["llama-3.1-8b-instruct"].share == 0.297
    assert by_model["llama-3.1-8b-instruct"].tokens == 72_109
    # Qwen2.5 7B keeps 4 KV heads over 28 layers: 56 KiB a token, more than twice the tokens.
    assert by_model["qwen2.5-7b-instruct"].tokens > 2 * by_model["llama-3.1-8b-instruct"].tokens


def test_a_smaller_gpu_goes_phased_and_a_too_small_share_is_a_problem(shaped_models: Path) -> None:
    config = load_config(GPU_CONFIGS / "faireval_panel_8b.yaml", [f"models_dir={shaped_models}"])
    registry = ModelRegistry(shaped_models)
    placement, engines = gpu_engine_memory(Engines(config, registry), list(SHAPES), 40.0)
    assert placement.mode == "phased"  # 54 GiB of needs > 80% of 40 GiB
    llama = next(e for e in engines if e.model == "llama-3.1-8b-instruct")
    assert llama.share == 0.85  # alone on the GPU: vLLM's default share, all of it
    assert llama.tokens == int((0.85 * 40 - 2 * SHAPES[llama.model][6] / GIB) * GIB // 131072)
    # A 16 GiB GPU's 0.85 cannot hold 15 GiB of weights and a context: check says so, one line each.
    for problem_gib in (16.0,):
        _placement, small = gpu_engine_memory(Engines(config, registry), list(SHAPES), problem_gib)
        assert not any(e.fits_one_sequence for e in small)
    forced = load_config(
        GPU_CONFIGS / "faireval_panel_8b.yaml",
        [f"models_dir={shaped_models}", "placement.memory_fractions={qwen2.5-7b-instruct: 0.18}"],
    )
    _placement, engines = gpu_engine_memory(Engines(forced, registry), list(SHAPES), 80.0)
    qwen = next(e for e in engines if e.model == "qwen2.5-7b-instruct")
    assert qwen.share == 0.18 and not qwen.fits_one_sequence  # 14.4 GiB < 14.2 GiB + 8192 x 56 KiB
