"""``chateval check``: a ready config gets its size, counted with the real tokenizer and no
weights loaded; a broken one gets one line per problem and exit code 2."""

import pytest
from typer.testing import CliRunner

from chateval.cli import app
from chateval.config.files import load_config
from chateval.run.check import check, render_check
from tests.support.helpers import CONFIGS_DIR, MODELS_DIR

QUICKSTART = CONFIGS_DIR / "quickstart.yaml"


@pytest.fixture(autouse=True)
def _default_model() -> None:
    if not (MODELS_DIR / "smollm2-135m" / "config.json").is_file():
        pytest.skip("the default model is not prepared (bash scripts/setup.sh)")


def test_the_quickstart_is_ready_and_sized() -> None:
    report = check(load_config(QUICKSTART))
    assert report.problems == []
    # 12 items in both answer orders; 2 referees, each a discussion turn, an assessment and
    # its scores: 144 requests, as the quickstart's run.json counts.
    assert (report.items, report.debates, sum(report.requests.values())) == (12, 24, 144)
    assert report.requests == {
        "smollm2-135m: discussion": 48,
        "smollm2-135m: assessment": 48,
        "smollm2-135m: scores": 48,
    }
    assert report.prompt_tokens["smollm2-135m"] > 100 * 144  # every request holds an item
    config = load_config(QUICKSTART)
    turns = config.sampling.discussion_max_tokens * 48
    assert report.generated_bound["smollm2-135m"] > turns  # the assessments and scores on top
    # 2 x 30 layers x 3 KV heads x 64 x 4 bytes (float32 on a CPU): 45 KiB; vLLM's own log
    # for the same engine says "CPU KV cache size: 23,296 tokens" (whole blocks of 16).
    where = report.models["smollm2-135m"]
    assert "KV cache 45.0 KiB a token (1 GiB, vllm.cpu_kvcache_space_gib: 23,301 tokens)" in where
    assert "an empty system message replaces its template's own ('You are a helpful AI" in where
    said = render_check("quickstart", report)  # what the command prints (exit 0)
    assert said.startswith("quickstart: ready to run\n") and "12 items, 24 debates, 144 requests" in said


def test_every_problem_is_one_line_and_exit_2() -> None:
    agents = "agents=[{role: critic, model: acme/llama-9b}, {role: general_public, model: ./no-such-folder}]"
    result = CliRunner().invoke(app, ["check", str(QUICKSTART), "--set", agents])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 2
    assert lines[0].startswith("error: unknown model 'acme/llama-9b': not a name in")
    assert "not in the local Hugging Face cache" in lines[0]
    # A relative folder is read against the config's own folder.
    assert lines[1].startswith(f"error: unknown model '{CONFIGS_DIR / 'no-such-folder'}'")
    # What is known without the models still says the run's size, and whether a GPU is here (issue 53).
    assert "  known without those: 12 items, 24 debates, 144 requests; " in result.output
    assert "    acme/llama-9b: discussion: 24" in result.output
    assert "GPU visible here" in result.output


def test_engine_settings_for_a_model_no_referee_uses() -> None:
    config = load_config(QUICKSTART, ["vllm.engine_args={other-model: {enforce_eager: true}}"])
    assert check(config).problems == [
        "vllm.engine_args: no agent uses model(s) other-model; the run's: smollm2-135m"
    ]


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_an_adaptive_config_says_how_much_of_it_is_debated() -> None:
    config = load_config(CONFIGS_DIR / "systems_adaptive.yaml")
    report = check(config)
    assert report.problems == [] and report.items == 12 and report.adaptive_budget == 8
    said = render_check(config.name, report)
    assert "adaptive design: at most 8 of these 12 candidate comparisons are debated, about 67%" in said


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_a_gpu_too_small_for_the_share_is_one_problem_line() -> None:
    """--gpu-memory sizes the vLLM engines for a GPU; a share that cannot hold the weights and one
    sequence of the context would make vLLM refuse to start, so check says so first."""
    small = CliRunner().invoke(
        app, ["check", str(QUICKSTART), "--gpu-memory", "1", "--set", "vllm.gpu_memory_utilization=0.3"]
    )
    assert small.exit_code == 2
    said = "error: model 'smollm2-135m': on a 1 GiB GPU its share (0.30 = 0.3 GiB) leaves at most"
    assert said in small.output
    assert "vLLM would refuse to start" in small.output
    roomy = CliRunner().invoke(app, ["check", str(QUICKSTART), "--gpu-memory", "80"], env={"COLUMNS": "250"})
    assert roomy.exit_code == 0
    assert "on a 80 GiB GPU, co_resident (auto: 1.3 GiB needed, 80.0 GiB free)" in roomy.output
    assert "smollm2-135m: 0.85 of it = 68.0 GiB; weights 0.3 GiB; KV cache at most 67.7 GiB" in roomy.output
