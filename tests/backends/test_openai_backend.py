"""The ``openai`` backend against a small local server that fails on purpose (tests/support/fake_server.py):
requests and their fields, retries with backoff, timeouts, 4xx, API keys, a server that stops
answering mid-run (exit 1, resume), and served and in-process referees in one panel."""

import json
import math
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from chateval.backends.http import ServerClient
from chateval.backends.openai_backend import OpenAIBackend, _by_text
from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.cli import app
from chateval.config.files import dump_config
from chateval.core.backend import ChatMessage, GenerationRequest, RemoteBackend
from chateval.core.model_spec import ModelSpec
from chateval.engines.models import ModelRegistry
from chateval.engines.pool import ModelPool
from chateval.errors import BackendError, ConfigError
from chateval.run.runner import run
from tests.support.fake_server import Behaviour, fake_server
from tests.support.helpers import prompt_dependent, tiny_config

OUTPUTS = ("transcripts.jsonl", "verdicts.jsonl", "metrics.json")


@pytest.fixture
def behaviour() -> Behaviour:
    return Behaviour(models=["served"], responder=prompt_dependent)


@pytest.fixture
def base_url(behaviour: Behaviour) -> Iterator[str]:
    with fake_server(behaviour) as url:
        yield url


def write_registry(folder: Path, base_url: str, **server: object) -> Path:
    """A registry with model ``served`` on the server at ``base_url`` (fast retries for tests)."""
    entry = {"backend": "openai", "server": {"base_url": base_url, "backoff_s": 0.01, **server}}
    (folder / "registry.yaml").write_text(yaml.safe_dump({"served": entry, "local": {"path": "local"}}))
    return folder


def served_config(models_dir: Path, agents: tuple[str, str] = ("served", "served"), **overrides: object):  # noqa: ANN201
    """The tiny run with the registry of ``models_dir``; hard verdicts only (the fake server has
    no vocabulary to read score probabilities with)."""
    return tiny_config(
        models_dir=str(models_dir),
        backend="transformers",
        verdict={"evidence_max_tokens": 6, "reasoning_max_tokens": 12, "soft": False},
        agents=[{"role": "critic", "model": agents[0]}, {"role": "everyday_reader", "model": agents[1]}],
        **overrides,
    )


def backend_at(base_url: str, **server: object) -> OpenAIBackend:
    spec = ModelSpec.model_validate(
        {"backend": "openai", "server": {"base_url": base_url, "backoff_s": 0.01, **server}}
    )
    return OpenAIBackend("served", spec, None, seed=3)


def ask(text: str = "Say something.", **fields: object) -> GenerationRequest:
    return GenerationRequest(model="served", messages=(ChatMessage("user", text),), max_tokens=8, **fields)  # type: ignore[arg-type]


# Requests ------------------------------------------------------------------------------------
def test_request_bodies_carry_leads_constraints_and_seeds(base_url: str) -> None:
    backend = backend_at(base_url)
    try:
        plain = backend.body(ask())
        assert plain["model"] == "served" and plain["seed"] == 3 and plain["max_tokens"] == 8
        assert "continue_final_message" not in plain and "structured_outputs" not in plain
        lead = ask(regex="Scores: [1-9]").messages + (ChatMessage("assistant", "Critic:"),)
        body = backend.body(GenerationRequest(model="served", messages=lead, max_tokens=4, regex="[1-9]"))
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        assert body["structured_outputs"] == {"regex": "[1-9]"}
        assert body["messages"][-1] == {"role": "assistant", "content": "Critic:"}
    finally:
        backend.close()


def test_results_have_the_offline_shape_and_counts(behaviour: Behaviour, base_url: str) -> None:
    backend = backend_at(base_url)
    try:
        assert isinstance(backend, RemoteBackend)
        assert backend.context_window == 2048  # the server's, the entry sets none
        requests = [ask(f"Item {n} is here.") for n in range(5)]
        results = backend.generate(requests)
        assert [r.text for r in results] == [prompt_dependent(r) for r in requests]
        assert [r.prompt_tokens for r in results] == [4] * 5
        assert all(r.finish_reason == "stop" for r in results)
        # Token counting without a local folder goes to the server's /tokenize.
        assert backend.count_tokens("three words here") == 3
        assert backend.count_prompt_tokens(requests[0].messages) == 4
        with pytest.raises(ConfigError, match="soft verdicts on a served model need its tokenizer"):
            backend.digit_tokens()
    finally:
        backend.close()


def test_token_id_logprobs_become_probabilities() -> None:
    # vLLM spells tokens "token_id:N" with return_tokens_as_token_ids; two ids may spell one digit.
    candidates = [
        {"token": "token_id:17", "logprob": math.log(0.5)},
        {"token": "token_id:90", "logprob": math.log(0.25)},
        {"token": "token_id:18", "logprob": math.log(0.2)},
        {"token": "token_id:5", "logprob": math.log(0.05)},  # not asked for
    ]
    assert _by_text(candidates, {17: "1", 90: "1", 18: "2"}) == pytest.approx({"1": 0.75, "2": 0.2})


# Failures ------------------------------------------------------------------------------------
@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_5xx_and_429_are_retried_with_doubling_jittered_backoff(behaviour: Behaviour, base_url: str) -> None:
    behaviour.failures = [503, 429, 500]
    client = ServerClient(base_url, backoff_s=0.1, max_retries=3)
    try:
        answer = client.post(
            "chat/completions", {"model": "served", "messages": [{"role": "user", "content": "x"}]}
        )
    finally:
        client.close()
    assert answer["choices"][0]["message"]["content"]
    assert client.retries == 3 and len(behaviour.bodies) == 4
    gaps = [b - a for a, b in zip(behaviour.arrivals, behaviour.arrivals[1:], strict=False)]
    for gap, wait in zip(gaps, (0.1, 0.2, 0.4), strict=True):
        assert wait <= gap < 1.5 * wait + 0.3  # jitter: up to half as long again


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_a_retry_after_header_is_waited(behaviour: Behaviour, base_url: str) -> None:
    behaviour.failures, behaviour.retry_after = [429], "1"
    client = ServerClient(base_url, backoff_s=0.01, max_retries=1)
    try:
        client.post("chat/completions", {"model": "served", "messages": [{"role": "user", "content": "x"}]})
    finally:
        client.close()
    assert 1.0 <= behaviour.arrivals[1] - behaviour.arrivals[0] < 1.5


def test_retries_are_bounded(behaviour: Behaviour, base_url: str) -> None:
    behaviour.failures = [502] * 10
    client = ServerClient(base_url, backoff_s=0.01, max_retries=2, name="judge")
    try:
        with pytest.raises(
            BackendError, match=r"judge: POST .* failed 3 times .*HTTP 502: scripted failure 502"
        ):
            client.post("chat/completions", {"model": "served", "messages": []})
    finally:
        client.close()
    assert len(behaviour.bodies) == 3


def test_a_refused_connection_is_retried_then_reported() -> None:
    with fake_server(Behaviour()) as url:
        pass  # the port is free again: nothing listens there now
    client = ServerClient(url, backoff_s=0.01, max_retries=2)
    try:
        with pytest.raises(BackendError, match="failed 3 times .*ConnectError"):
            client.get("models")
    finally:
        client.close()
    assert client.retries == 2


def test_a_slow_answer_times_out_and_is_retried(behaviour: Behaviour, base_url: str) -> None:
    behaviour.delay_s = 1.0
    client = ServerClient(base_url, timeout_s=0.2, backoff_s=0.01, max_retries=1)
    started = time.monotonic()
    try:
        with pytest.raises(BackendError, match="failed 2 times .*ReadTimeout"):
            client.post(
                "chat/completions", {"model": "served", "messages": [{"role": "user", "content": "x"}]}
            )
    finally:
        client.close()
    assert time.monotonic() - started < 1.5  # two 0.2 s attempts, not two 1 s answers
    assert len(behaviour.bodies) == 2


def test_a_4xx_fails_at_once_with_the_servers_message(behaviour: Behaviour, base_url: str) -> None:
    behaviour.refuse = (400, "unsupported field: structured_outputs")
    backend = backend_at(base_url)
    try:
        with pytest.raises(
            BackendError, match=r"refused \(HTTP 400: unsupported field: structured_outputs\)"
        ):
            backend.generate([ask()])
    finally:
        backend.close()
    assert len(behaviour.bodies) == 1 and backend.client.retries == 0


def test_a_wrong_served_name_is_refused_before_the_run(
    behaviour: Behaviour, base_url: str, tmp_path: Path
) -> None:
    models_dir = write_registry(tmp_path, base_url, model="llama-70b")
    out = tmp_path / "out"
    with pytest.raises(
        ConfigError, match=r"hosts no model 'llama-70b' \(it hosts: served\); set server.model"
    ):
        run(served_config(models_dir), out)
    assert not out.exists() and not behaviour.bodies


def test_the_api_key_comes_from_the_named_variable(
    behaviour: Behaviour, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    behaviour.api_key = "s3cret"
    monkeypatch.delenv("CHATEVAL_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"API key is read from \$CHATEVAL_TEST_KEY, which is not set"):
        backend_at(base_url, api_key_env="CHATEVAL_TEST_KEY")
    monkeypatch.setenv("CHATEVAL_TEST_KEY", "wrong")
    backend = backend_at(base_url, api_key_env="CHATEVAL_TEST_KEY")
    try:
        with pytest.raises(BackendError, match="HTTP 401: invalid API key"):
            backend.generate([ask()])
    finally:
        backend.close()
    monkeypatch.setenv("CHATEVAL_TEST_KEY", "s3cret")
    backend = backend_at(base_url, api_key_env="CHATEVAL_TEST_KEY")
    try:
        assert backend.generate([ask()])[0].text
    finally:
        backend.close()
    assert behaviour.headers[-1]["Authorization"] == "Bearer s3cret"


def test_registry_entries_of_served_models_are_checked(tmp_path: Path) -> None:
    def refused(entry: dict[str, object], message: str) -> None:
        (tmp_path / "registry.yaml").write_text(yaml.safe_dump({"m": entry}))
        with pytest.raises(ConfigError, match=message):
            ModelRegistry(tmp_path)

    server = {"base_url": "http://127.0.0.1:8000/v1"}
    refused({"backend": "openai"}, "backend: openai and a server: section go together")
    refused({"path": "x", "server": server}, "backend: openai and a server: section go together")
    refused({"backend": "openai", "server": {"base_url": "127.0.0.1:8000"}}, r"field 'server.base_url'")
    refused(
        {"backend": "openai", "server": server, "engine_args": {"quantization": "fp8"}}, "its server loads it"
    )
    refused({"backend": "vllm"}, "path is required")


# Whole runs ----------------------------------------------------------------------------------
def test_a_served_run_equals_the_in_process_run_and_streams(base_url: str, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    config = served_config(write_registry(tmp_path, base_url))
    run(config, reference, backends={"served": ScriptedBackend("served", prompt_dependent)})
    out = tmp_path / "out"
    run(config, out)
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


@pytest.mark.slow  # a second or more: the fast tier stays under its 60 s
def test_a_server_that_stops_answering_ends_the_run_with_exit_1_and_it_resumes(
    behaviour: Behaviour, base_url: str, tmp_path: Path
) -> None:
    models_dir = write_registry(tmp_path, base_url, max_retries=1)
    config = served_config(models_dir)
    reference = tmp_path / "reference"
    run(config, reference, backends={"served": ScriptedBackend("served", prompt_dependent)})
    config_file = tmp_path / "served.yaml"
    config_file.write_text(dump_config(config))

    behaviour.die_after = 9  # answers a few debate steps, then hangs up on every request
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(config_file), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "run the same command again to resume" in result.output
    assert '"step_done"' in (out / "journal.jsonl").read_text()  # what finished is on disk
    assert not (out / "run.json").exists()

    behaviour.die_after = None
    result = CliRunner().invoke(app, ["run", str(config_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


@pytest.mark.slow  # a second or more: the fast tier stays under its 60 s
def test_sigterm_stops_a_run_with_a_word_and_it_resumes(
    behaviour: Behaviour, base_url: str, tmp_path: Path
) -> None:
    """SIGTERM (a batch scheduler's stop) ends a run as Ctrl-C does: engines closed, finished
    steps kept, one line saying how to go on (exit 143); the same command resumes it."""
    models_dir = write_registry(tmp_path, base_url)
    config = served_config(models_dir)
    reference = tmp_path / "reference"
    run(config, reference, backends={"served": ScriptedBackend("served", prompt_dependent)})
    config_file = tmp_path / "served.yaml"
    config_file.write_text(dump_config(config))

    def terminated_after_a_few(request: GenerationRequest) -> str:
        if behaviour.answered == 9:  # a few debate steps in: the scheduler stops the job
            os.kill(os.getpid(), signal.SIGTERM)
        return prompt_dependent(request)

    behaviour.responder = terminated_after_a_few
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(config_file), "-o", str(out)])
    assert result.exit_code == 143, result.output
    assert (
        f"stopped: the finished steps are saved in {out}; run the same command again to resume"
        in result.output
    )
    assert '"step_done"' in (out / "journal.jsonl").read_text() and not (out / "run.json").exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the command put the default back

    behaviour.responder = prompt_dependent
    result = CliRunner().invoke(app, ["run", str(config_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


@pytest.mark.slow  # a second or more: the fast tier stays under its 60 s
def test_without_a_local_tokenizer_the_preflight_counts_items_side_by_side(
    behaviour: Behaviour, base_url: str, tmp_path: Path
) -> None:
    behaviour.tokenize_delay_s = 0.01  # a server some distance away
    data = {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl"}
    run(served_config(write_registry(tmp_path, base_url), data=data), tmp_path / "out")
    assert behaviour.tokenize_peak > 1  # several items' counts in flight at once


def test_served_and_in_process_referees_share_one_panel(base_url: str, tmp_path: Path) -> None:
    config = served_config(write_registry(tmp_path, base_url), agents=("local", "served"))
    reference = tmp_path / "reference"
    run(
        config,
        reference,
        backends={
            "local": ScriptedBackend("local", prompt_dependent),
            "served": ScriptedBackend("served", prompt_dependent),
        },
    )
    out = tmp_path / "out"
    local = StreamingScriptedBackend("local", prompt_dependent)
    run(config, out, backends={"local": local})
    assert local.polls > 0  # the in-process referee streamed beside the served one
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    info = json.loads((out / "run.json").read_text())  # run.json says what served each model
    assert info["backend"] == "openai+streamingscripted"
    assert info["backends"] == {"local": "streamingscripted", "served": "openai"}


def test_served_models_stay_loaded_across_phased_swaps() -> None:
    loaded: list[str] = []

    def loader(model: str) -> ScriptedBackend:
        loaded.append(model)
        return ScriptedBackend(model, prompt_dependent)

    pool = ModelPool(["a", "served", "b"], loader, mode="phased", pinned=["served"])
    pool.start()
    assert set(pool.loaded) == {"served", "a"}
    pool.get("b")
    assert set(pool.loaded) == {"served", "b"}
    pool.get("served")
    assert set(pool.loaded) == {"served", "b"} and loaded.count("served") == 1
    pool.close()
    assert not pool.loaded


def test_config_refuses_engine_arguments_for_a_served_model(base_url: str, tmp_path: Path) -> None:
    config = served_config(
        write_registry(tmp_path, base_url), vllm={"engine_args": {"served": {"quantization": "fp8"}}}
    )
    with pytest.raises(ConfigError, match="model 'served' is served; its server takes them"):
        run(config, tmp_path / "out")


def test_replicas_apply_to_vllm_models_and_never_to_served_ones(base_url: str, tmp_path: Path) -> None:
    from chateval.engines.factory import Engines

    models_dir = write_registry(tmp_path, base_url)
    registry = ModelRegistry(models_dir)
    config = served_config(models_dir, agents=("local", "served"), scale={"replicas": 3})
    vllm = config.model_copy(update={"backend": "vllm"})
    assert [Engines(vllm, registry).replicas(m) for m in ("local", "served")] == [3, 1]
    assert Engines(config, registry).replicas("local") == 1  # a transformers model stays local
    listed = served_config(models_dir, scale={"models": {"served": 2}})
    with pytest.raises(ConfigError, match="model 'served' is served; its server scales it"):
        run(listed, tmp_path / "out")
