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
from tests.support.helpers import CONFIGS_DIR, tiny_config

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
    shown = preview(config, swapped=swapped)
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
        assert "General Public: <what General Public says in round 1>" in last
    kinds = {r.kind for r in shown}
    assert {"discussion", "assessment", "scores", "probe assessment", "probe scores"} <= kinds
    assert ("summary" in kinds) == (strategy == "simultaneous_summarizer")
    assert all((r.constraint is not None) == r.kind.endswith("scores") for r in shown)


def test_preview_cli_text_and_json() -> None:
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
    assert all(m["role"] in ("user", "assistant") for r in requests for m in r["messages"])
    samples = {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl"}
    item = next(i for i in load_run_items(tiny_config(data=samples)) if i.id == "q02")
    first_prompt = requests[0]["messages"][0]["content"]
    assert first_prompt.index(item.answer_b) < first_prompt.index(item.answer_a)  # swapped order


def test_preview_names_a_missing_item() -> None:
    result = CliRunner().invoke(app, ["preview", str(CONFIGS_DIR / "quickstart.yaml"), "--item", "nope"])
    assert result.exit_code == 2
    assert "'nope'" in result.output and "q01" in result.output
