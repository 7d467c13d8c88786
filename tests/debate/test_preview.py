"""``chateval preview`` shows exactly the messages a run sends, with placeholders for replies."""

import json

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.core.backend import GenerationRequest
from chateval.debate.building import build_debates, build_panel, load_run_items
from chateval.debate.preview import placeholder, preview
from chateval.debate.scheduler import Scheduler
from chateval.run.session import read_judged
from tests.support.helpers import CONFIGS_DIR, MODELS_DIR, tiny_config

MODEL = "smollm2-135m"
STRATEGIES = ["one_by_one", "simultaneous", "simultaneous_summarizer"]


def recorded_run(
    config, swapped: bool, answers: dict[tuple[object, ...], list[str]]
) -> list[GenerationRequest]:  # noqa: ANN001,E501
    """The requests a real scheduler run of the config's first item sends, in order, answered
    from ``answers`` (a request the preview did not show has no answer and fails the run;
    identical requests, e.g. a last-round probe and the verdict, are answered in turn)."""
    sent: list[GenerationRequest] = []

    def respond(request: GenerationRequest) -> str:
        sent.append(request)
        return answers[(request.messages, request.regex)].pop(0)

    debates = build_debates(load_run_items(config)[:1], position_calibration=swapped)
    Scheduler({MODEL: ScriptedBackend(MODEL, respond)}).run(build_panel(config), debates[-1:])
    return sent


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_preview_is_what_the_run_sends(strategy: str, swapped: bool) -> None:
    config = tiny_config(
        strategy=strategy,
        rounds=3,
        agents=[{"role": "general_public"}, {"role": "critic"}, {"role": "news_author"}],
        opinion_probes=True,
    )
    judged = read_judged(config)
    shown = preview(judged.items, judged.panel, config.data.source, swapped=swapped)
    panel = build_panel(config)
    answers: dict[tuple[object, ...], list[str]] = {}
    for r in shown:
        answers.setdefault((r.messages, r.constraint), []).append(placeholder(panel, r.turn))
    sent = recorded_run(config, swapped, answers)
    assert [(r.messages, r.regex, r.max_tokens) for r in sent] == [
        (r.messages, r.constraint, r.max_tokens) for r in shown
    ]
    # Earlier replies stand in the later prompts as placeholders under their speaker's name.
    last = shown[-1].messages[0].content if strategy == "one_by_one" else ""
    if last:
        assert "[General Public]: <what General Public says in round 1>" in last
    kinds = {r.kind for r in shown}
    assert {"discussion", "assessment", "scores", "probe assessment", "probe scores"} <= kinds
    assert ("summary" in kinds) == (strategy == "simultaneous_summarizer")
    # Scores are constrained; an assessment's constraint only keeps scores from coming first.
    assert all((r.constraint is not None) == r.kind.endswith(("scores", "assessment")) for r in shown)
    assert all(r.scores == r.kind.endswith("scores") for r in shown)


def test_preview_cli_text_and_json() -> None:
    if not (MODELS_DIR / "smollm2-135m" / "config.json").is_file():
        pytest.skip("the default model is not prepared (bash scripts/setup.sh): its chat template is read")
    runner = CliRunner()
    config = str(CONFIGS_DIR / "quickstart.yaml")
    text = runner.invoke(app, ["preview", config])
    assert text.exit_code == 0, text.output
    assert "=== request 1: Critic, round 1, discussion" in text.output
    assert "--- constraint (regular expression) ---" in text.output
    as_json = runner.invoke(app, ["preview", config, "--json", "--item", "q02", "--swapped"])
    assert as_json.exit_code == 0, as_json.output
    requests = json.loads(as_json.output)
    assert [r["agent"] for r in requests[:2]] == ["Critic", "Everyday Reader"]
    assert [r["kind"] for r in requests[-2:]] == ["assessment", "scores"]
    # SmolLM2's template would add its own system prompt: each request is sent an empty one.
    assert "# smollm2-135m: its chat template would add a system prompt" in text.output
    assert "--- system (empty) ---" in text.output
    assert all(r["messages"][0] == {"role": "system", "content": ""} for r in requests)
    assert all(m["role"] in ("user", "assistant") for r in requests for m in r["messages"][1:])
    samples = {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl"}
    item = next(i for i in load_run_items(tiny_config(data=samples)) if i.id == "q02")
    first_prompt = requests[0]["messages"][1]["content"]
    assert first_prompt.index(item.answer_b) < first_prompt.index(item.answer_a)  # swapped order


def test_preview_names_a_missing_item() -> None:
    result = CliRunner().invoke(app, ["preview", str(CONFIGS_DIR / "quickstart.yaml"), "--item", "nope"])
    assert result.exit_code == 2
    assert "'nope'" in result.output and "q01" in result.output


def paper_config(name: str, **overrides: str) -> list[str]:
    """``configs/paper/<name>.yaml``, on the quickstart's items (no data set needed)."""
    sets = {
        "data.format": "jsonl_pairwise",
        "data.path": "../samples/quickstart_pairwise.jsonl",
        "data.limit": "1",
        **overrides,
    }
    return [str(CONFIGS_DIR / "paper" / f"{name}.yaml")] + [f"--set={k}={v}" for k, v in sets.items()]


def preview_json(args: list[str]) -> list[dict[str, object]]:
    result = CliRunner().invoke(app, ["preview", *args, "--json"])
    assert result.exit_code == 0, result.output
    requests: list[dict[str, object]] = json.loads(result.output)
    return requests


def content(request: dict[str, object]) -> str:
    return "\n".join(m["content"] for m in request["messages"])  # type: ignore[index, union-attr]


def test_paper_configs_turns_say_what_the_papers_said() -> None:
    """configs/paper: every turn states the 1-10 scale; discussion turns say only "your turn,
    keep it short and clear"; the verdict turn has the paper's points and nothing about equal
    scores; the five roles carry their viewpoint and their job."""
    requests = preview_json(paper_config("faireval_roles_5"))
    for request in requests:
        if request["kind"] == "scores":
            continue
        text = content(request)
        assert "overall score from 1 to 10" in text
        for nudge in ("disagree", "Do not give scores", "equal scores only", "equally good"):
            assert nudge not in text
    talk = [r for r in requests if r["kind"] == "discussion"]
    assert talk and all(
        content(r).endswith(f"Now it is your turn, {r['agent']}. Keep what you say short and clear.")
        for r in talk
    )
    verdicts = [content(r) for r in requests if r["kind"] == "assessment"]
    assert len(verdicts) == 5
    for text in verdicts:
        for point in (
            "First give a thorough explanation of your evaluation",
            "Avoid any bias",
            "do not let the order in which the answers were shown affect your judgement",
            "You are not required to give the same scores as the other referees",
            "Keep strictly to this format:\nEvaluation evidence: <your explanation>\n"
            "Assistant 1: <score from 1 to 10>\nAssistant 2: <score from 1 to 10>",
        ):
            assert point in text
    roles = {
        "General Public": ("interested in the story", "responsibility to be the first to say which answer"),
        "Critic": ("whether it flows", "question the other referees' judgements", "on the same level"),
        "News Author": ("original article", "which answer is the better one"),
        "Psychologist": ("how people behave", "which answer is the better one"),
        "Scientist": ("scientific method", "which answer is the better one"),
    }
    for name, phrases in roles.items():
        own = next(content(r) for r in talk if r["agent"] == name)
        assert f"You are now {name}, one of the referees in this task." in own
        assert all(phrase in own for phrase in phrases), name


def test_nudged_style_adds_the_earlier_instructions() -> None:
    requests = preview_json(paper_config("faireval_chateval", prompt_style="nudged"))
    talk = content(next(r for r in requests if r["kind"] == "discussion"))
    verdict = content(next(r for r in requests if r["kind"] == "assessment"))
    assert "answer the other referees where you disagree. Do not give scores yet." in talk
    assert "give equal scores only if they are equally good" in verdict


def test_paper_summarizer_is_shown_by_preview() -> None:
    """configs/paper's summarizer: one summary per referee after round 1, 512 tokens, no task."""
    requests = preview_json(paper_config("faireval_simultaneous_summarizer"))
    summaries = [r for r in requests if r["kind"] == "summary"]
    assert [r["agent"] for r in summaries] == ["Summarizer for General Public", "Summarizer for Critic"]
    assert all(r["max_tokens"] == 512 and "[Question]" not in content(r) for r in summaries)
    last = content(next(r for r in requests if r["kind"] == "assessment" and r["agent"] == "Critic"))
    assert "[Summarizer]: <the summary for Critic after round 1>" in last
    assert "[General Public]: <what General Public says in round 1>" in last  # the talk is still quoted
