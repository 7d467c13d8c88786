"""Runs that share a judgment store (chateval.store, chateval.run.reuse): a leaderboard that
gains a system or a prompt judges only what is new and refits to a from-scratch run's numbers;
anything that changes a prompt or a decoding misses the store, and nothing else does; a
finished folder rerun, and an adaptive design, reuse what was judged.

Every run here is on a scripted backend under the default model's name, fingerprinted through
a registry of its own (``models_dir``: a folder of two small files), so no test reads the
default model's 260 MB."""

import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from chateval.backends.scripted import Responder, ScriptedBackend, StreamingScriptedBackend
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ConfigError
from chateval.record.journal import load
from chateval.run.reuse import CacheChoice
from chateval.run.runner import RunResult, run
from tests.support.helpers import SAMPLE_SYSTEMS, assert_same_statistics, prompt_text, read_jsonl, tiny_config
from tests.support.scripted import soft_checksum_referee

_ANSWER = re.compile(r"\[Assistant \d's answer\]\n(.*?)\n\[End of Assistant \d's answer\]", re.DOTALL)
_QUESTION = re.compile(r"\[Question\]\n(.*?)\n\n", re.DOTALL)
OLD_TIME = 1_600_000_000  # a model file's modification time, long settled (its digest is cached)


# Runs and what they sent --------------------------------------------------------------------


def store_models_dir(folder: Path) -> Path:
    """A models folder whose registry names the default model ``tiny/``: two small files."""
    (folder / "tiny").mkdir(parents=True)
    (folder / "registry.yaml").write_text(yaml.safe_dump({DEFAULT_MODEL: {"path": "tiny"}}))
    for name, text in (("config.json", '{"max_position_embeddings": 8192}'), ("weights.bin", "w" * 64)):
        (folder / "tiny" / name).write_text(text)
        os.utime(folder / "tiny" / name, (OLD_TIME, OLD_TIME))
    return folder


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    return store_models_dir(tmp_path / "models")


def judged(
    config: RunConfig,
    out: Path,
    cache: CacheChoice,
    *,
    streaming: bool = False,
    responder: Responder = soft_checksum_referee,
    force: bool = False,
) -> tuple[RunResult, list[GenerationRequest]]:
    """``config`` run into ``out`` with the judgment store ``cache``: its result, and every
    request its scripted backend was sent."""
    kind = StreamingScriptedBackend if streaming else ScriptedBackend
    backend = kind(DEFAULT_MODEL, responder)
    result = run(config, out, backends={DEFAULT_MODEL: backend}, cache=cache, force=force)
    return result, [request for call in backend.calls for request in call]


def store_info(out: Path) -> dict[str, Any]:
    """run.json's account of the judgment store."""
    info: dict[str, Any] = json.loads((out / "run.json").read_text())["judgment_store"]
    return info


def counts(out: Path) -> tuple[int, int]:
    """How many of ``out``'s debates the store gave, and how many were judged now."""
    info = store_info(out)
    return info["reused"], info["judged"]


def transcripts(out: Path) -> dict[str, dict[str, Any]]:
    """transcripts.jsonl's records by debate key."""
    return {record["key"]: record for record in read_jsonl(out / "transcripts.jsonl")}


def metrics(out: Path) -> Any:
    return json.loads((out / "metrics.json").read_text())


def assert_same_results(out: Path, reference: Path) -> None:
    """The same debates said alike (where each came from aside), and the same verdicts and
    metrics to float noise (computed statistics are never compared exactly)."""
    ours, theirs = transcripts(out), transcripts(reference)
    assert list(ours) == list(theirs)
    assert all(ours[key]["messages"] == theirs[key]["messages"] for key in ours)
    assert_same_statistics(read_jsonl(out / "verdicts.jsonl"), read_jsonl(reference / "verdicts.jsonl"))
    assert_same_statistics(metrics(out), metrics(reference))


# The systems sample: which system answered what ----------------------------------------------


def write_systems(
    folder: Path, prompts: int, edits: dict[tuple[str, str], str] | None = None
) -> dict[str, str]:
    """The systems sample's three files cut to their first ``prompts`` prompts and written to
    ``folder`` (``edits``: (system, prompt) -> another response): system -> file."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for system, source in SAMPLE_SYSTEMS.items():
        rows = read_jsonl(Path(source))[:prompts]
        for row in rows:
            row["response"] = (edits or {}).get((system, row["prompt"]), row["response"])
        files[system] = str(folder / f"{system}.jsonl")
        Path(files[system]).write_text("".join(json.dumps(row) + "\n" for row in rows))
    return files


def systems_config(
    models_dir: Path, files: dict[str, str], systems: Sequence[str] | None = None
) -> RunConfig:
    """All pairs of ``systems`` (default: every one of ``files``) in both orders, two referees."""
    chosen = {s: files[s] for s in systems or files}
    return tiny_config(models_dir=str(models_dir), data={"format": "jsonl_responses", "path": chosen})


def sample_rows() -> list[dict[str, Any]]:
    return [
        dict(row, system=system) for system, path in SAMPLE_SYSTEMS.items() for row in read_jsonl(Path(path))
    ]


def systems_shown(request: GenerationRequest) -> frozenset[str]:
    """The systems whose answers ``request`` shows (the sample's responses are all different)."""
    by_response = {row["response"]: row["system"] for row in sample_rows()}
    return frozenset(by_response[answer] for answer in _ANSWER.findall(prompt_text(request)))


def prompt_asked(request: GenerationRequest) -> str:
    """The sample prompt whose question ``request`` shows."""
    by_question = {row["question"]: row["prompt"] for row in sample_rows()}
    return str(by_question[_QUESTION.findall(prompt_text(request))[0]])


def assert_reused_from(out: Path, judged_in: Path, keys: Sequence[str]) -> None:
    """Exactly ``keys`` of ``out``'s debates were taken from the store, each judged in ``judged_in``."""
    records = transcripts(out)
    assert sorted(k for k, r in records.items() if "reused" in r) == sorted(keys)
    for key in keys:
        reused = records[key]["reused"]
        assert re.fullmatch(r"[0-9a-f]{64}", reused["key"]) and reused["judged_at"]
        assert reused["judged_in"] == str(judged_in.resolve())


# A leaderboard that grows ---------------------------------------------------------------------


def test_a_system_added_judges_only_its_comparisons_and_refits_as_from_scratch(
    models_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    files = write_systems(tmp_path / "data", prompts=4)
    judged(systems_config(models_dir, files, ["careful", "brief"]), tmp_path / "two", store)
    _, requests = judged(systems_config(models_dir, files), tmp_path / "three", store)
    judged(systems_config(models_dir, files), tmp_path / "scratch", False)

    # Only the 8 new comparisons (rambling against each of two systems on 4 prompts), both orders.
    assert requests and all("rambling" in systems_shown(r) for r in requests)
    assert {systems_shown(r) for r in requests} == {
        frozenset({"rambling", "careful"}),
        frozenset({"rambling", "brief"}),
    }
    assert {prompt_asked(r) for r in requests} == {"p1", "p2", "p3", "p4"}
    assert len(requests) == 8 * 2 * 6  # 6 requests a debate
    old = transcripts(tmp_path / "two")
    new = transcripts(tmp_path / "three")
    assert all(new[key]["messages"] == record["messages"] for key, record in old.items())
    assert_reused_from(tmp_path / "three", tmp_path / "two", list(old))
    assert counts(tmp_path / "three") == (8, 16)
    assert "judgment_store" not in json.loads((tmp_path / "scratch" / "run.json").read_text())
    assert_same_results(tmp_path / "three", tmp_path / "scratch")


def test_a_prompt_added_judges_only_its_comparisons_and_refits_as_from_scratch(
    models_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    before = write_systems(tmp_path / "before", prompts=2)
    after = write_systems(tmp_path / "after", prompts=3)
    judged(systems_config(models_dir, before), tmp_path / "two", store)
    _, requests = judged(systems_config(models_dir, after), tmp_path / "three", store)
    judged(systems_config(models_dir, after), tmp_path / "scratch", False)

    # The new prompt's 3 comparisons in both orders, 6 requests each.
    assert {prompt_asked(r) for r in requests} == {"p3"} and len(requests) == 3 * 2 * 6
    old = transcripts(tmp_path / "two")
    assert all(transcripts(tmp_path / "three")[key]["messages"] == r["messages"] for key, r in old.items())
    assert_reused_from(tmp_path / "three", tmp_path / "two", list(old))
    assert counts(tmp_path / "three") == (12, 6)
    assert_same_results(tmp_path / "three", tmp_path / "scratch")


# What misses the store, and what does not ----------------------------------------------------

CRITIC = "You care about whether an answer is correct, and you say so plainly."


def item_config(models_dir: Path, data: object = None, **changes: object) -> RunConfig:
    """One quickstart item in both orders (two debates), two referees over two rounds, the first
    given as {name, description}; ``changes``: dotted keys (``sampling.temperature``) -> values."""
    tree: dict[str, Any] = {
        "models_dir": str(models_dir),
        "data": data or {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
        "rounds": 2,
        "agents": [{"role": {"name": "Critic", "description": CRITIC}}, {"role": "everyday_reader"}],
        "sampling": {"temperature": 0.0, "seed": 0, "discussion_max_tokens": 12, "summary_max_tokens": 12},
        "verdict": {"evidence_max_tokens": 6, "reasoning_max_tokens": 12, "on_failure": "drop_referee"},
        "scheduling": "barrier",
        "placement": {"mode": "co_resident"},
    }
    for dotted, value in changes.items():
        *path, last = dotted.split(".")
        place = tree
        for key in path:
            place = place[key]
        place[last] = value
    return tiny_config(**tree)


OTHER_CRITIC = [
    {"role": {"name": "Critic", "description": CRITIC + " Briefly."}},
    {"role": "everyday_reader"},
]
PROMPT_CHANGES: dict[str, dict[str, Any]] = {
    "a changed role text": {"agents": OTHER_CRITIC},
    "a changed verdict scale": {"verdict.high": 9},
    "a changed rounds count": {"rounds": 3},
    "another prompt layout": {"prompt_layout": "conversation"},
    "another strategy": {"strategy": "simultaneous"},
}
DECODING_CHANGES: dict[str, dict[str, Any]] = {
    "another sampling temperature": {"sampling.temperature": 0.7},
    "another seed when sampling (the run above's)": {"sampling.temperature": 0.7, "sampling.seed": 1},
    "another token budget": {"sampling.discussion_max_tokens": 13},
}
HITS: dict[str, dict[str, Any]] = {
    "the run's name": {"name": "renamed"},
    "the headline aggregation": {"verdict.aggregation": "soft"},
    "the rule for a failed verdict": {"verdict.on_failure": "tie"},
    "the seed at temperature 0 (the bootstrap's)": {"sampling.seed": 7},
    "step barriers or streaming": {"scheduling": "streaming"},
    "the placement": {"placement.mode": "phased"},
}


@pytest.mark.parametrize("changes", [PROMPT_CHANGES, DECODING_CHANGES], ids=["prompts", "decoding"])
def test_what_changes_a_prompt_or_a_decoding_misses_the_store(
    changes: dict[str, dict[str, object]], models_dir: Path, tmp_path: Path
) -> None:
    """Each change against one store, a run each, in order (the sampled run's debates are there
    when only the seed changes)."""
    store = tmp_path / "store"
    judged(item_config(models_dir), tmp_path / "base", store)
    for number, (name, change) in enumerate(changes.items()):
        out = tmp_path / f"changed{number}"
        _, requests = judged(item_config(models_dir, **change), out, store)
        assert requests and counts(out) == (0, 2), name
        assert not any("reused" in record for record in transcripts(out).values()), name


def test_what_changes_no_prompt_and_no_decoding_hits_the_store(models_dir: Path, tmp_path: Path) -> None:
    store, base = tmp_path / "store", tmp_path / "base"
    # A backend handed in is fingerprinted by its class: one class for barrier and streaming runs.
    judged(item_config(models_dir), base, store, streaming=True)
    said = transcripts(base)
    for number, (name, change) in enumerate(HITS.items()):
        out = tmp_path / f"other{number}"
        _, requests = judged(item_config(models_dir, **change), out, store, streaming=True)
        assert requests == [] and counts(out) == (2, 0), name
        assert_reused_from(out, base, list(said))
        assert all(transcripts(out)[key]["messages"] == record["messages"] for key, record in said.items())


def test_an_edited_answer_judges_again_only_the_debates_that_show_it(
    models_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    edited = "Because the fridge is cold."
    before = write_systems(tmp_path / "before", prompts=2)
    after = write_systems(tmp_path / "after", prompts=2, edits={("careful", "p1"): edited})
    judged(systems_config(models_dir, before), tmp_path / "before_run", store)
    _, requests = judged(systems_config(models_dir, after), tmp_path / "after_run", store)
    # careful's answer to p1 is in two comparisons (against brief, against rambling), both orders.
    assert len(requests) == 2 * 2 * 6 and all(edited in prompt_text(r) for r in requests)
    again = [k for k, r in transcripts(tmp_path / "after_run").items() if "reused" not in r]
    assert sorted(again) == sorted(
        f"p1:{pair}{order}"
        for pair in ("careful-vs-brief", "careful-vs-rambling")
        for order in ("", "#swapped")
    )
    assert counts(tmp_path / "after_run") == (8, 4)


def test_another_model_in_the_same_folder_misses_the_store_and_a_touched_file_does_not(
    models_dir: Path, tmp_path: Path
) -> None:
    """The model's folder is fingerprinted by its files' contents (read once, then cached by
    their stat): a file touched keeps its digest; a file rewritten with other bytes does not."""
    store = tmp_path / "store"
    weights = models_dir / "tiny" / "weights.bin"
    judged(item_config(models_dir), tmp_path / "first", store)
    os.utime(weights)  # now: another stat, the same bytes
    _, requests = judged(item_config(models_dir), tmp_path / "touched", store)
    assert requests == [] and counts(tmp_path / "touched") == (2, 0)
    weights.write_text("v" * 64)  # another checkpoint under the same name, the same size
    _, requests = judged(item_config(models_dir), tmp_path / "changed", store)
    assert requests and counts(tmp_path / "changed") == (0, 2)
    assert store_info(tmp_path / "changed")["panel"] != store_info(tmp_path / "first")["panel"]


# A finished folder run again, and an adaptive design ----------------------------------------


def test_a_finished_folder_is_refused_saying_the_store_is_reused_and_force_reuses_everything(
    models_dir: Path, tmp_path: Path
) -> None:
    store, out, reference = tmp_path / "store", tmp_path / "out", tmp_path / "reference"
    config = item_config(models_dir)
    judged(config, out, store)
    shutil.copytree(out, reference)
    with pytest.raises(
        ConfigError, match="already holds a finished run; pass --force to judge it again"
    ) as refused:
        judged(config, out, store)
    assert "every debate the judgment store holds is reused, not judged again" in str(refused.value)
    _, requests = judged(config, out, store, force=True)
    assert requests == [] and counts(out) == (2, 0)
    assert_reused_from(out, out, list(transcripts(reference)))
    assert_same_results(out, reference)


def test_a_finished_folder_without_a_store_is_refused_with_the_plain_word(
    models_dir: Path, tmp_path: Path
) -> None:
    judged(item_config(models_dir), tmp_path / "out", False)
    with pytest.raises(ConfigError) as refused:
        judged(item_config(models_dir), tmp_path / "out", False)
    assert str(refused.value).endswith("already holds a finished run; pass --force to overwrite it")


def test_an_adaptive_design_reruns_into_a_new_folder_with_the_same_choices_and_no_request(
    models_dir: Path, tmp_path: Path
) -> None:
    from tests.run.test_adaptive_run import planted_data, planted_referee

    data = planted_data(tmp_path / "answers.jsonl", {"s1": 9, "s2": 6, "s3": 3, "s4": 1}, 8)
    design = {
        "format": "jsonl_responses",
        "path": str(data),
        "compare": {"adaptive": {"wave": 6, "budget": 20}},
    }
    config = item_config(models_dir, data=design, agents=[{"role": "critic"}], rounds=1)
    store = tmp_path / "store"
    _, first_requests = judged(config, tmp_path / "first", store, responder=planted_referee)
    _, requests = judged(config, tmp_path / "second", store, responder=planted_referee)
    assert first_requests and requests == []
    first, second = load(tmp_path / "first" / "journal.jsonl"), load(tmp_path / "second" / "journal.jsonl")
    assert (second.waves, second.stop) == (first.waves, first.stop) and first.stop == "budget spent"
    assert counts(tmp_path / "second") == (40, 0)
    assert_same_results(tmp_path / "second", tmp_path / "first")
