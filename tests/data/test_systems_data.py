"""Systems in the data: responses rows, comparison designs, label_fraction, records with systems."""

import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.config.data import DataConfig
from chateval.config.designs import CompareDesign
from chateval.config.files import parse_config
from chateval.core.items import DirectItem, Item, PairwiseItem
from chateval.data import load_items
from chateval.data.designs import all_pairs, comparisons_per_prompt, design_pairs
from chateval.debate.building import load_run_items
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ConfigError, DataError
from chateval.run.runner import run
from tests.support.helpers import (
    CONFIGS_DIR,
    MODELS_DIR,
    SAMPLE_SYSTEMS,
    asks_for_scores,
    prompt_dependent,
    read_jsonl,
    tiny_config,
)

SAMPLE = SAMPLE_SYSTEMS
SYSTEMS = ["careful", "brief", "rambling"]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
needs_shared = pytest.mark.skipif(not (SHARED / "faireval").is_dir(), reason="../shared/datasets not present")


def data(fmt: str = "jsonl_responses", path: Any = SAMPLE, **options: Any) -> DataConfig:
    return DataConfig.model_validate({"format": fmt, "path": path, **options})


def pairwise(items: list[Item]) -> list[PairwiseItem]:
    assert all(isinstance(i, PairwiseItem) for i in items)
    return [i for i in items if isinstance(i, PairwiseItem)]


def write_rows(path: Path, rows: list[tuple[Any, str, str]]) -> Path:
    """A jsonl_responses file of (prompt, system, response) rows; the question follows the prompt."""
    lines = [json.dumps({"prompt": p, "question": f"q{p}", "system": s, "response": r}) for p, s, r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def grid(path: Path, prompts: int, systems: int) -> Path:
    return write_rows(path, [(p, f"s{s}", f"answer {p}/{s}") for p in range(prompts) for s in range(systems)])


# Designs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_all_pairs_is_every_unordered_pair(n: int) -> None:
    systems = [f"s{i}" for i in range(n)]
    pairs = all_pairs(systems)
    assert len(pairs) == n * (n - 1) // 2 == comparisons_per_prompt(CompareDesign(), n)
    assert len({frozenset(p) for p in pairs}) == len(pairs)
    assert all(systems.index(a) < systems.index(b) for a, b in pairs)


def test_against_puts_each_system_against_the_baseline() -> None:
    design = CompareDesign(against="s2")
    pairs = design_pairs(design, ["s0", "s1", "s2", "s3"], 0, "p")
    assert pairs == [("s0", "s2"), ("s1", "s2"), ("s3", "s2")]
    assert comparisons_per_prompt(design, 4) == 3


@pytest.mark.parametrize(("n", "k"), [(3, 2), (4, 1), (4, 2), (4, 3), (5, 2), (5, 4), (6, 3), (8, 2), (8, 5)])
def test_opponents_gives_every_system_exactly_k(n: int, k: int) -> None:
    systems = [f"s{i}" for i in range(n)]
    design = CompareDesign(opponents=k)
    for prompt in map(str, range(20)):
        pairs = design_pairs(design, systems, 7, prompt)
        assert len(pairs) == n * k // 2 == comparisons_per_prompt(design, n)
        assert len({frozenset(p) for p in pairs}) == len(pairs)  # no comparison twice
        degree = Counter(s for pair in pairs for s in pair)
        assert all(degree[s] == k for s in systems), degree


def test_opponents_is_seeded_and_balanced() -> None:
    systems = [f"s{i}" for i in range(6)]
    design = CompareDesign(opponents=2)
    prompts = [str(i) for i in range(3000)]
    assert design_pairs(design, systems, 1, "7") == design_pairs(design, systems, 1, "7")
    assert any(
        design_pairs(design, systems, 1, p) != design_pairs(design, systems, 2, p) for p in prompts[:10]
    )
    coverage = Counter(frozenset(pair) for p in prompts for pair in design_pairs(design, systems, 0, p))
    expected = 3000 * 6 / 15  # 6 comparisons per prompt spread over 15 pairs
    assert len(coverage) == 15
    assert all(abs(count - expected) < 0.15 * expected for count in coverage.values()), coverage


# Loading responses -----------------------------------------------------------------------------


def test_sample_all_pairs() -> None:
    items = pairwise(load_items(data()))
    assert len(items) == 4 * 3
    assert items[0].id == "p1:careful-vs-brief"
    assert (items[0].system_a, items[0].system_b, items[0].prompt) == ("careful", "brief", "p1")
    assert items[0].answer_b.startswith("The cold makes the starch") and items[0].question.startswith("Why")
    assert len({i.id for i in items}) == len(items)
    for prompt in ("p1", "p2", "p3", "p4"):
        mine = [i for i in items if i.prompt == prompt]
        assert {frozenset((i.system_a, i.system_b)) for i in mine} == {
            frozenset(p) for p in all_pairs(SYSTEMS)
        }
        assert len({i.question for i in mine}) == 1


def test_sample_against_and_opponents_and_systems() -> None:
    against = pairwise(load_items(data(compare={"against": "brief"})))
    assert [(i.system_a, i.system_b) for i in against[:2]] == [("careful", "brief"), ("rambling", "brief")]
    assert len(against) == 4 * 2 and against[1].id == "p1:rambling-vs-brief"
    two = pairwise(load_items(data(systems=["rambling", "careful"])))
    assert [i.id for i in two] == [f"p{n}:rambling-vs-careful" for n in range(1, 5)]
    opponents = pairwise(load_items(data(compare={"opponents": 2})))
    assert len(opponents) == 4 * 3  # K = N - 1: every pair
    # The adaptive design's candidates are all_pairs' items; the run chooses among them.
    adaptive = pairwise(load_items(data(compare={"adaptive": {"budget": 5}})))
    assert [i.id for i in adaptive] == [i.id for i in pairwise(load_items(data()))]


def test_limit_counts_prompts_and_direct_items_group_by_prompt() -> None:
    limited = pairwise(load_items(data(limit=2)))
    assert {i.prompt for i in limited} == {"p1", "p2"} and len(limited) == 6
    direct = load_items(data(), task="direct")
    assert len(direct) == 12 and all(isinstance(i, DirectItem) for i in direct)
    first = direct[0]
    assert isinstance(first, DirectItem)
    assert (first.id, first.group, first.system) == ("p1:careful", "p1", "careful")
    assert first.context.startswith("Why does bread")


def test_table_responses_csv_and_json(tmp_path: Path) -> None:
    csv_path = tmp_path / "rows.csv"
    csv_path.write_text(
        "qid,text,model,output,human\n"
        "1,What is 2+2?,alpha,4,5\n"
        "1,What is 2+2?,beta model,four,4\n"
        "2,Name a colour.,alpha,red,3\n"
        "2,Name a colour.,beta model,blue,2\n"
    )
    fields = {"prompt": "qid", "question": "text", "system": "model", "response": "output"}
    items = pairwise(load_items(data("table_responses", csv_path, fields=fields)))
    assert [i.id for i in items] == ["1:alpha-vs-beta_model", "2:alpha-vs-beta_model"]
    assert items[0].system_b == "beta model" and items[0].answer_b == "four"
    direct = load_items(
        data("table_responses", csv_path, fields=fields, scores={"overall": "human"}), "direct"
    )
    assert [i.scores for i in direct if isinstance(i, DirectItem)][:2] == [{"overall": 5.0}, {"overall": 4.0}]
    json_path = tmp_path / "rows.json"
    json_path.write_text(
        json.dumps([{"prompt": 3, "question": "q", "system": s, "response": s} for s in "xyz"])
    )
    assert len(load_items(data("table_responses", json_path))) == 3


def test_jsonl_responses_direct_scores(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [
        {"prompt": 1, "question": "q", "system": s, "response": "r", "scores": {"fluency": 2}} for s in "ab"
    ]
    path.write_text("\n".join(map(json.dumps, rows)) + "\n")
    items = load_items(data(path=path), "direct")
    assert [i.scores for i in items if isinstance(i, DirectItem)] == [{"fluency": 2.0}] * 2


# Pairwise items with systems --------------------------------------------------------------------


def test_jsonl_pairwise_reads_systems_and_prompt(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    base = {"question": "q", "answer_a": "a", "answer_b": "b"}
    path.write_text(
        json.dumps({"id": 1, **base, "system_a": "x", "system_b": "y", "prompt": 7})
        + "\n"
        + json.dumps({"id": 2, **base})
        + "\n"
    )
    first, second = pairwise(load_items(DataConfig(format="jsonl_pairwise", path=path)))
    assert (first.system_a, first.system_b, first.prompt) == ("x", "y", "7")
    assert (second.system_a, second.system_b, second.prompt) == (None, None, None)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"system_a": "x"}, r"p.jsonl:1: field 'system_b' is missing; give both systems or neither"),
        ({"system_a": "x", "system_b": "x"}, r"p.jsonl:1: fields 'system_a' and 'system_b' name the same"),
        ({"system_a": "", "system_b": "y"}, r"p.jsonl:1: field 'system_a' is empty"),
        ({"system_a": 3, "system_b": "y"}, r"p.jsonl:1: field 'system_a' must be a string, got int"),
        ({"prompt": True}, r"p.jsonl:1: field 'prompt' must be a string or integer, got bool"),
    ],
)
def test_jsonl_pairwise_system_errors(tmp_path: Path, extra: dict[str, Any], message: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": 1, "question": "q", "answer_a": "a", "answer_b": "b", **extra}) + "\n")
    with pytest.raises(DataError, match=message):
        load_items(DataConfig(format="jsonl_pairwise", path=path))


def test_table_pairwise_maps_systems(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("q,l,r,ml,mr,pid\nq1,a,b,m1,m2,p9\n")
    fields = {"question": "q", "answer_a": "l", "answer_b": "r", "system_a": "ml", "system_b": "mr"}
    (item,) = pairwise(load_items(data("table_pairwise", path, fields={**fields, "prompt": "pid"})))
    assert (item.system_a, item.system_b, item.prompt) == ("m1", "m2", "p9")
    with pytest.raises(ConfigError, match="map both system_a and system_b"):
        parse_config(
            {
                "task": "pairwise",
                "agents": [{"role": "critic"}],
                "data": {"format": "table_pairwise", "path": str(path), "fields": {"system_a": "ml"}},
            },
            "c.yaml",
            tmp_path,
        )


# Errors, before any model loads -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"compare": {"against": "nope"}},
            ConfigError,
            r"systems \(3 mapped files\): data.compare.against: 'nope' is not one of the systems "
            r"\(careful, brief, rambling\)",
        ),
        ({"compare": {"opponents": 3}}, ConfigError, r"data.compare.opponents: K=3 but there are 3 systems"),
        ({"compare": {"opponents": 1}}, ConfigError, r"K=1 is odd and so is the number of systems \(3\)"),
        (
            {"compare": {"adaptive": {"budget": 4, "top_k": 3}}},
            ConfigError,
            r"data.compare.adaptive.top_k: 3 but there are 3 systems \(careful, brief, rambling\)",
        ),
        ({"systems": ["careful", "gpt-5"]}, DataError, r"data.systems: 'gpt-5' not in the data"),
        ({"systems": ["careful"]}, DataError, r"comparisons need at least two systems; found 1: careful"),
    ],
)
def test_design_errors(options: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        load_items(data(**options))


@pytest.mark.parametrize(
    ("compare", "message"),
    [
        ({"opponents": 0}, r"data.compare: opponents: K must be at least 1, got 0"),
        ({"opponents": 2, "against": "x"}, r"give one design, not against and opponents"),
        (
            "every_pair",
            r"expected all_pairs, \{against: SYSTEM\}, \{opponents: K\} or \{adaptive: \{budget: N\}\}, "
            "got 'every_pair'",
        ),
        ({"baseline": "x"}, r"data.compare: baseline: unknown key"),
        ({"adaptive": {"budget": 4}, "opponents": 2}, r"give one design, not opponents and adaptive"),
        ({"adaptive": {}}, r"data.compare: adaptive.budget: Field required"),
        ({"adaptive": {"budget": 0}}, r"adaptive.budget: Input should be greater than or equal to 1"),
        (
            {"adaptive": {"budget": 4, "wave": 0}},
            r"adaptive.wave: Input should be greater than or equal to 1",
        ),
        ({"adaptive": {"budget": 4, "waves": 2}}, r"adaptive.waves: unknown key"),
    ],
)
def test_bad_compare_is_a_config_error(compare: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tiny_config(data={"format": "jsonl_responses", "path": SAMPLE, "compare": compare})


def test_compare_needs_a_responses_format_and_a_pairwise_task() -> None:
    with pytest.raises(ConfigError, match=r"compare: only the responses formats \(faireval_systems, "):
        tiny_config(data={"format": "jsonl_pairwise", "path": "x.jsonl", "compare": "all_pairs"})
    with pytest.raises(ConfigError, match="task 'direct' scores every response"):
        tiny_config(
            task="direct",
            dimensions=[{"name": "fluency", "description": "reads well"}],
            data={"format": "jsonl_responses", "path": SAMPLE, "compare": "all_pairs"},
        )
    with pytest.raises(ConfigError, match="choose them with `systems`"):
        tiny_config(data={"format": "jsonl_responses", "path": SAMPLE, "pair": ["a", "b"]})


def test_missing_response_is_an_error_or_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = [(p, s, "r") for p in (1, 2, 3) for s in ("x", "y", "z") if (p, s) != (2, "y")]
    path = write_rows(tmp_path / "rows.jsonl", rows)
    with pytest.raises(
        DataError, match=r"rows.jsonl: prompt '2' has no response of system 'y'; every system"
    ):
        load_items(data(path=path))
    with caplog.at_level(logging.WARNING):
        items = pairwise(load_items(data(path=path, missing_responses="skip_prompt")))
    assert {i.prompt for i in items} == {"1", "3"} and len(items) == 6
    assert "left out 1 prompt lacking a system's response (first: '2')" in caplog.text


def test_duplicate_row_and_changed_question(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "dup.jsonl", [(1, "x", "r"), (1, "y", "r"), (1, "x", "again")])
    with pytest.raises(
        DataError,
        match=r"dup.jsonl:3: duplicate response of system 'x' to prompt '1' \(first at .*dup.jsonl:1\)",
    ):
        load_items(data(path=path))
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"prompt": 1, "question": "a", "system": "x", "response": "r"})
        + "\n"
        + json.dumps({"prompt": 1, "question": "b", "system": "y", "response": "r"})
        + "\n"
    )
    with pytest.raises(DataError, match=r"q.jsonl:2: field 'question' of prompt '1' differs from the one at"):
        load_items(data(path=path))


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"question": "q", "system": "x", "response": "r"}, r"r.jsonl:1: missing field 'prompt'"),
        ({"prompt": 1, "question": "q", "response": "r"}, r"r.jsonl:1: missing field 'system'"),
        (
            {"prompt": 1, "question": "q", "system": "x", "response": ""},
            r"r.jsonl:1: field 'response' is empty",
        ),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, record: dict[str, Any], message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError, match=message):
        load_items(data(path=path))


def test_a_bad_design_fails_the_run_before_any_model_loads(tmp_path: Path) -> None:
    """`chateval run` refuses it in one line; an unknown model name shows nothing got further."""
    config = {
        "task": "pairwise",
        "data": {"format": "jsonl_responses", "path": SAMPLE, "compare": {"against": "gpt-5"}},
        "agents": [{"role": "critic", "model": "no-such-model"}],
        "models_dir": str(MODELS_DIR),
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "data.compare.against: 'gpt-5' is not one of the systems" in result.output
    assert result.output.count("\n") == 1 and not (tmp_path / "out").exists()


# label_fraction ---------------------------------------------------------------------------------


def test_label_fraction_keeps_a_seeded_share() -> None:
    path = CONFIGS_DIR / "samples" / "quickstart_pairwise.jsonl"
    full = pairwise(load_items(DataConfig(format="jsonl_pairwise", path=path)))
    assert sum(i.label is not None for i in full) == 12

    def kept(fraction: float, seed: int = 0) -> list[str]:
        items = pairwise(
            load_items(DataConfig(format="jsonl_pairwise", path=path, label_fraction=fraction, seed=seed))
        )
        assert [i.id for i in items] == [i.id for i in full]  # every item stays, some unlabelled
        assert all(i.label in (None, f.label) for i, f in zip(items, full, strict=True))
        return [i.id for i in items if i.label is not None]

    assert len(kept(0.25)) == 3 and kept(0.25) == kept(0.25)
    assert any(kept(0.25, seed) != kept(0.25) for seed in range(1, 6))
    assert kept(0.0) == [] and len(kept(1.0)) == 12 and len(kept(0.5)) == 6
    direct = load_items(
        DataConfig(
            format="jsonl_direct",
            path=CONFIGS_DIR / "samples" / "quickstart_direct.jsonl",
            label_fraction=0.5,
        )
    )
    assert sum(bool(i.scores) for i in direct if isinstance(i, DirectItem)) == 3


# FairEval as responses ---------------------------------------------------------------------------


@needs_shared
def test_faireval_systems_attaches_the_human_labels_in_orientation() -> None:
    folder = SHARED / "faireval"
    items = pairwise(load_items(data("faireval_systems", folder)))
    assert len(items) == 80 * 6
    assert {i.system_a for i in items} | {i.system_b for i in items} == {
        "alpaca-13b",
        "gpt-4",
        "gpt35",
        "vicuna-13b",
    }
    labelled = [i for i in items if i.label is not None]
    assert len(labelled) == 80 and all({i.system_a, i.system_b} == {"gpt35", "vicuna-13b"} for i in labelled)
    reference = pairwise(load_items(DataConfig(format="faireval", path=folder)))  # gpt35 as A
    assert reference[0].system_a == "gpt35" and reference[0].prompt == "1"
    by_prompt = {i.prompt: i.label for i in labelled}
    assert [by_prompt[r.prompt] for r in reference] == [r.label for r in reference]
    assert labelled[0].id == "1:gpt35-vs-vicuna-13b"
    flip = {"A": "B", "B": "A", "tie": "tie"}
    against = pairwise(load_items(data("faireval_systems", folder, compare={"against": "gpt35"})))
    vicuna = [i for i in against if i.system_a == "vicuna-13b"]
    assert [i.label for i in vicuna] == [flip[r.label] for r in reference if r.label]  # type: ignore[index]
    two = pairwise(load_items(data("faireval_systems", folder, systems=["gpt-4", "alpaca-13b"])))
    assert len(two) == 80 and all(i.label is None for i in two)
    quarter = pairwise(load_items(data("faireval_systems", folder, label_fraction=0.25)))
    assert sum(i.label is not None for i in quarter) == 20
    with pytest.raises(DataError, match=r"no answers for model 'gpt-5'; available: alpaca-13b, gpt-4"):
        load_items(data("faireval_systems", folder, systems=["gpt-5", "gpt35"]))


# Runs --------------------------------------------------------------------------------------------


def test_a_scripted_run_debates_both_orders_and_records_the_systems(tmp_path: Path) -> None:
    config = tiny_config(data={"format": "jsonl_responses", "path": SAMPLE, "compare": {"against": "brief"}})
    run(config, tmp_path, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    transcripts = read_jsonl(tmp_path / "transcripts.jsonl")
    records = read_jsonl(tmp_path / "verdicts.jsonl")
    ids = [i.id for i in load_run_items(config)]
    assert len(ids) == 8 and [r["item_id"] for r in records] == ids
    assert Counter(t["item_id"] for t in transcripts) == {i: 2 for i in ids}
    assert all([o["swapped"] for o in r["orders"]] == [False, True] for r in records)
    first = records[0]
    assert (first["prompt"], first["system_a"], first["system_b"]) == ("p1", "careful", "brief")
    assert (first["words_a"], first["words_b"]) == (60, 17)  # the sample's p1 answers
    assert json.loads((tmp_path / "run.json").read_text())["debates"] == 16


def test_a_direct_run_records_system_and_prompt(tmp_path: Path) -> None:
    config = tiny_config(
        task="direct",
        position_calibration=False,
        dimensions=[{"name": "fluency", "description": "reads well", "low": 1, "high": 3}],
        data={"format": "jsonl_responses", "path": SAMPLE, "limit": 1},
    )
    run(
        config,
        tmp_path,
        backends={
            DEFAULT_MODEL: ScriptedBackend(
                DEFAULT_MODEL, lambda r: "\nFluency: 2" if asks_for_scores(r) else "ok"
            )
        },
    )
    records = read_jsonl(tmp_path / "verdicts.jsonl")
    assert [(r["item_id"], r["system"], r["prompt"], r["group"]) for r in records] == [
        (f"p1:{s}", s, "p1", "p1") for s in SYSTEMS
    ]


def test_records_without_systems_have_no_system_keys(scripted_reference: Path) -> None:
    records = read_jsonl(scripted_reference / "verdicts.jsonl")
    new = {"prompt", "system_a", "system_b", "words_a", "words_b", "system"}
    assert records and all(not new & record.keys() for record in records)


def test_systems_quickstart_config_loads() -> None:
    from chateval.config.files import load_config

    config = load_config(CONFIGS_DIR / "systems_quickstart.yaml")
    assert len(load_run_items(config)) == 12 and config.agents[0].model == DEFAULT_MODEL


def test_systems_adaptive_config_loads() -> None:
    from chateval.config.files import load_config

    config = load_config(CONFIGS_DIR / "systems_adaptive.yaml")
    adaptive = config.data.design().adaptive
    assert adaptive is not None and (adaptive.budget, adaptive.wave, adaptive.top_k) == (8, 3, None)
    assert len(load_run_items(config)) == 12  # the candidates: all pairs on every prompt


def test_a_folder_of_files_without_system_names_asks_for_system_from(tmp_path: Path) -> None:
    """Issue 53: one file per system, rows without a system field: say which setting names them."""
    folder = tmp_path / "answers"
    folder.mkdir()
    for name in ("alpha", "beta"):
        (folder / f"{name}.jsonl").write_text(
            json.dumps({"prompt": 1, "question": "q", "response": name}) + "\n"
        )
    with pytest.raises(
        DataError, match=r"alpha.jsonl:1: missing field 'system'; .* set data.system_from: file"
    ):
        load_items(data(path=folder))
    [item] = load_items(data(path=folder, system_from="file"))
    assert isinstance(item, PairwiseItem) and {item.system_a, item.system_b} == {"alpha", "beta"}


def test_a_stray_folder_beside_the_data_files_gets_a_glob_of_the_files(tmp_path: Path) -> None:
    folder = tmp_path / "answers"
    (folder / "archive").mkdir(parents=True)
    for name in ("alpha", "beta"):
        (folder / f"{name}.jsonl").write_text(
            json.dumps({"prompt": 1, "question": "q", "response": name}) + "\n"
        )
    (folder / "archive" / "old.jsonl").write_text("{}\n")
    with pytest.raises(DataError) as error:
        load_items(data(path=folder, system_from="file"))
    assert str(error.value).endswith(f"(here: {folder / '*.jsonl'})")
