"""Real-model runs with the default model (SmolLM2-135M-Instruct) on both backends.

Each backend is loaded once per session; runs are 2 items with short talk, so the suite stays
fast on 2 CPU cores. What must hold: every referee's final verdict parses (each referee first
writes its assessment, then its constrained scores), and with step barriers (transformers) the
number of backend calls is one per debate step; vLLM streams.
"""

import json
from pathlib import Path

import pytest

from chateval.config.files import load_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.progress import Progress
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, assert_close, read_jsonl, tiny_config

pytestmark = pytest.mark.slow

# A reasoned verdict is two steps (assessment, then scores).
STEPS = {"one_by_one": 6, "simultaneous": 3, "simultaneous_summarizer": 4}
DIMENSIONS = [
    {"name": "naturalness", "description": "sounds natural", "low": 1, "high": 3},
    {"name": "groundedness", "description": "uses the fact", "low": 0, "high": 1},
]


def check_distribution(distribution: dict, decoded: int) -> None:  # type: ignore[type-arg]
    """A stored score distribution sums to 1 over the allowed values, and under greedy decoding
    its most likely value is the decoded one.

    Greedy decoding picks the likeliest token at each position, not the likeliest value, so for
    a value of two tokens ("10" as "1", "0") the check is on its first token: the mass of the
    values sharing that token is the largest.
    """
    probabilities = {int(v): p for v, p in distribution["probabilities"].items()}
    assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    assert distribution["unmapped"] == pytest.approx(0.0, abs=1e-3)
    first = str(decoded)[0]

    def first_token_mass(piece: str) -> float:
        return sum(p for v, p in probabilities.items() if str(v).startswith(piece))

    if any(str(v).startswith(first) and v != decoded for v in probabilities) or len(str(decoded)) > 1:
        assert first_token_mass(first) >= max(first_token_mass(str(v)[0]) for v in probabilities) - 1e-6
    else:
        assert probabilities[decoded] >= max(probabilities.values()) - 1e-6


def check_soft(verdicts: list[dict]) -> None:  # type: ignore[type-arg]
    """Every verdict of a real-model run came with a readable distribution per score."""
    for record in verdicts:
        for order in record.get("orders", [record]):
            for referee in order["referees"]:
                if "score_a" in referee:  # pairwise: distributions in the order shown
                    shown = (referee["score_a"], referee["score_b"])
                    decoded = shown[::-1] if order["swapped"] else shown
                    for distribution, value in zip(referee["distributions"], decoded, strict=True):
                        check_distribution(distribution, value)
                else:
                    for name, value in referee["scores"].items():
                        check_distribution(referee["distributions"][name], value)
        assert record.get("soft_label") in ("A", "B", "tie") or record.get("soft_scores") is not None


def check_run(outdir: Path, steps: int, items: int, agents: int) -> list[dict]:  # type: ignore[type-arg]
    info = json.loads((outdir / "run.json").read_text())
    assert info["verdict_parse_failures"] == 0
    if info["scheduling"] == "barrier":  # one engine call per step; streaming counts engine steps
        assert info["batches"] == steps and info["engine_steps"] == 0
    else:
        assert info["scheduling"] == "streaming" and info["engine_steps"] >= steps and info["batches"] == 0
    verdicts = read_jsonl(outdir / "verdicts.jsonl")
    assert len(verdicts) == items
    for record in verdicts:
        orders = record.get("orders", [record])  # pairwise: one entry per answer order
        for order in orders:
            assert len(order["referees"]) == agents
            assert all("error" not in referee for referee in order["referees"])
            assert all(isinstance(referee["assessment"], str) for referee in order["referees"])
    return verdicts


# configs/paper's config of each strategy.
PAPER_CONFIGS = {
    "one_by_one": "faireval_chateval",
    "simultaneous": "faireval_simultaneous",
    "simultaneous_summarizer": "faireval_simultaneous_summarizer",
}


def paper_config(strategy: str, backend_name: str) -> RunConfig:
    """configs/paper's config of ``strategy`` (its roles, prompts and summarizer) on two
    quickstart items, with short turns, and the scores' own budget: the paper's one reply
    (``shared_budget``, tests/debate/test_paper_verdict_settings.py) would leave a 12-token
    assessment's scores no room, and these tests check that every verdict parses."""
    return load_config(
        CONFIGS_DIR / "paper" / f"{PAPER_CONFIGS[strategy]}.yaml",
        [
            f"backend={backend_name}",
            "data.format=jsonl_pairwise",
            "data.path=../samples/quickstart_pairwise.jsonl",
            "data.limit=2",
            "sampling.discussion_max_tokens=12",
            "sampling.summary_max_tokens=12",
            "verdict.reasoning_max_tokens=12",
            "verdict.shared_budget=false",
            "verdict.on_failure=drop_referee",
        ],
    )


# Every strategy on vLLM; on transformers (slow on two cores) one-by-one and the summarizer's,
# which holds the simultaneous strategy's turns and adds summaries: how a strategy schedules
# its turns does not depend on the backend (tests/prompts/test_prompt_layout.py).
PAIRWISE_RUNS = [("vllm", strategy) for strategy in STEPS]
PAIRWISE_RUNS += [("transformers", "one_by_one"), ("transformers", "simultaneous_summarizer")]


@pytest.mark.parametrize(("backend_name", "strategy"), PAIRWISE_RUNS)
def test_pairwise_debate_parses_every_verdict(
    backend_name: str, strategy: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Every strategy of configs/paper: every verdict parses, and no assessment comes out
    empty (its constraint keeps the scores from coming first)."""
    backend: Backend = request.getfixturevalue(f"{backend_name}_backend")
    result = run(paper_config(strategy, backend_name), tmp_path, backends={DEFAULT_MODEL: backend})
    verdicts = check_run(tmp_path, STEPS[strategy], items=2, agents=2)
    check_soft(verdicts)
    assert all(v["label"] in ("A", "B", "tie") for v in verdicts)
    assert all(len(v["orders"]) == 2 for v in verdicts)  # position calibration: both orders
    transcripts = read_jsonl(tmp_path / "transcripts.jsonl")
    kinds = [m["kind"] for m in transcripts[0]["messages"]]
    assert kinds.count("verdict") == kinds.count("assessment") == 2
    assert kinds.count("summary") == (2 if strategy == "simultaneous_summarizer" else 0)  # one per referee
    assert result.metrics is not None
    assert result.metrics["empty_assessments"]["empty"] == 0  # type: ignore[typeddict-item]


@pytest.mark.parametrize("backend_name", ["vllm", "transformers"])
def test_direct_scoring_parses_every_verdict(
    backend_name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    backend: Backend = request.getfixturevalue(f"{backend_name}_backend")
    config = tiny_config(
        task="direct",
        backend=backend_name,
        strategy="simultaneous",
        data={"format": "jsonl_direct", "path": "samples/quickstart_direct.jsonl", "limit": 2},
        dimensions=DIMENSIONS,
    )
    result = run(config, tmp_path, backends={DEFAULT_MODEL: backend})
    verdicts = check_run(tmp_path, STEPS["simultaneous"], items=2, agents=2)
    check_soft(verdicts)
    for record in verdicts:
        assert set(record["scores"]) == {"naturalness", "groundedness"}
        assert 1 <= record["scores"]["naturalness"] <= 3
    assert result.metrics is not None and "naturalness" in result.metrics["panel"]["dimensions"]


def test_backends_return_results_in_request_order(
    vllm_backend: Backend, transformers_backend: Backend
) -> None:
    from chateval.core.backend import ChatMessage, GenerationRequest

    prompts = ["Say the word apple.", "Count: one, two,", "Reply with the letter Q."]
    requests = [
        GenerationRequest(DEFAULT_MODEL, (ChatMessage("user", p),), max_tokens=4, regex=r"(apple|two|Q)")
        for p in prompts
    ]
    for backend in (vllm_backend, transformers_backend):
        results = backend.generate(requests)
        assert len(results) == 3
        assert all(r.text in ("apple", "two", "Q") for r in results)
        assert all(r.prompt_tokens > 0 and r.generated_tokens >= 1 for r in results)


def test_over_long_answer_is_cut_to_the_real_tokenizer(
    vllm_backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = 900
    monkeypatch.setattr(vllm_backend, "context_window", window)
    long_answer = "The answer repeats itself at length. " * 300
    record = {"id": "long", "question": "Say hi.", "answer_a": long_answer, "answer_b": "Hi there!"}
    (tmp_path / "items.jsonl").write_text(json.dumps(record) + "\n")
    config = tiny_config(data={"format": "jsonl_pairwise", "path": str(tmp_path / "items.jsonl")})
    result = run(config, tmp_path / "out", backends={DEFAULT_MODEL: vllm_backend})
    [verdict] = check_run(tmp_path / "out", STEPS["one_by_one"], items=1, agents=2)
    before, after = verdict["truncated"][DEFAULT_MODEL]["answer_a"]
    assert before > 1500 and after < window
    # Per-request prompt tokens as vLLM counted them stay inside the window.
    assert result.run_info["prompt_tokens"] / result.run_info["requests"] < window


class _RunningTokensSeen(Progress):
    """A bar that keeps the running requests' tokens it was told after each engine step."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[int] = []

    def add_requests(self, requests: int, tokens: int, running_tokens: int | None = None) -> None:
        super().add_requests(requests, tokens, running_tokens)
        self.seen.append(self.running_tokens)


def test_streaming_equals_barrier_on_vllm(vllm_backend: Backend, tmp_path: Path) -> None:
    """Greedy vLLM decodes the same text whether a step's prompts wait for each other or not.
    One strategy, the summarizer's (its summaries wait on a whole round): how each strategy
    schedules is tested against scripted referees (tests/debate/test_scheduling.py); what
    needs the real engine is that batches of another make-up decode the same."""
    transcripts, verdicts = {}, {}
    running: dict[str, list[int]] = {}
    for mode in ("barrier", "streaming"):
        bar = _RunningTokensSeen()
        config = tiny_config(
            strategy="simultaneous_summarizer", scheduling=mode, early_stop=True, opinion_probes=True
        )
        result = run(config, tmp_path / mode, backends={DEFAULT_MODEL: vllm_backend}, progress=bar)
        running[mode] = bar.seen
        assert result.run_info["scheduling"] == mode
        assert result.run_info["verdict_parse_failures"] == 0
        transcripts[mode] = (tmp_path / mode / "transcripts.jsonl").read_text()
        verdicts[mode] = read_jsonl(tmp_path / mode / "verdicts.jsonl")
    assert transcripts["barrier"] == transcripts["streaming"]
    # In both modes the bar heard the tokens of requests still running (vLLM's engine steps).
    assert max(running["barrier"]) > 0 and max(running["streaming"]) > 0
    # Same greedy text; the score probabilities come from batches of another make-up, so they
    # agree to float noise, not to the last digit.
    assert_close(verdicts["barrier"], verdicts["streaming"])


def test_three_systems_get_a_leaderboard_on_vllm(vllm_backend: Backend, tmp_path: Path) -> None:
    """The systems quickstart's data (one file per system, a labels file in either order) on
    its first prompt: all pairs (3 comparisons, 6 debates)."""
    data = load_config(CONFIGS_DIR / "systems_quickstart.yaml").data.model_dump(mode="json")
    data["limit"] = 1
    result = run(
        tiny_config(data=data, verdict={"reasoning_max_tokens": 12, "soft": True}),
        tmp_path,
        backends={DEFAULT_MODEL: vllm_backend},
    )
    verdicts = check_run(tmp_path, STEPS["one_by_one"], items=3, agents=2)
    check_soft(verdicts)
    assert {(v["system_a"], v["system_b"]) for v in verdicts} == {
        ("careful", "brief"),
        ("careful", "rambling"),
        ("brief", "rambling"),
    }
    # samples/systems_labels.csv labels careful vs brief on p1 ("first": careful).
    assert {v["item_id"]: v.get("human_label") for v in verdicts} == {
        "p1:careful-vs-brief": "A",
        "p1:careful-vs-rambling": None,
        "p1:brief-vs-rambling": None,
    }
    assert result.metrics is not None
    section = result.metrics["systems"]
    assert section["undecided"] == 0 and section["comparisons"] == 3
    assert sorted(row["system"] for row in section["leaderboard"]["rows"]) == ["brief", "careful", "rambling"]
    assert all(pair["soft_win_rate"] is not None for pair in section["win_rates"]["pairs"])


def test_an_adaptive_run_on_vllm_streams_its_waves(vllm_backend: Backend, tmp_path: Path) -> None:
    """The systems quickstart's data with the adaptive design, waves of 1 comparison and a budget
    of 3: the two seeded waves go in first, the third is chosen once the first has finished and
    streamed into the engine while it works on the second (3 comparisons, 6 debates)."""
    data = load_config(CONFIGS_DIR / "systems_quickstart.yaml").data.model_dump(mode="json")
    data["compare"] = {"adaptive": {"budget": 3, "wave": 1}}
    result = run(
        tiny_config(data=data, verdict={"reasoning_max_tokens": 12}),
        tmp_path,
        backends={DEFAULT_MODEL: vllm_backend},
    )
    verdicts = check_run(tmp_path, STEPS["one_by_one"], items=3, agents=2)
    assert result.run_info["scheduling"] == "streaming"
    adaptive = result.run_info["adaptive"]
    assert (adaptive["budget"], adaptive["wave"], adaptive["candidates"]) == (3, 1, 12)
    assert (adaptive["chosen"], adaptive["waves"], adaptive["stop"]) == (3, 3, "budget spent")
    waves = [
        json.loads(line) for line in (tmp_path / "journal.jsonl").read_text().splitlines() if '"wave"' in line
    ]
    assert [v["item_id"] for v in verdicts] == [key for wave in waves for key in wave["keys"]]
    assert len({v["prompt"] for v in verdicts}) == 3  # each on the prompt used least so far
    assert result.metrics is not None
    systems = result.metrics["systems"]
    assert systems["comparisons"] + systems["undecided"] == 3
