"""Config validation: typos and unknown names are errors with clear messages."""

from pathlib import Path

import pytest

from chateval.config.files import load_config
from chateval.errors import ConfigError
from tests.support.helpers import CONFIGS_DIR, tiny_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


BASE = """
task: pairwise
data: {format: jsonl_pairwise, path: x.jsonl}
agents: [{role: critic}]
"""


def test_quickstart_configs_load() -> None:
    for name in ("quickstart.yaml", "quickstart_direct.yaml"):
        config = load_config(CONFIGS_DIR / name)
        assert config.data.path.is_file()


def test_unknown_key_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"rounds_typo: unknown key"):
        load_config(write(tmp_path, BASE + "rounds_typo: 3\n"))


def test_unknown_nested_key_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sampling.temprature: unknown key") as caught:
        load_config(write(tmp_path, BASE + "sampling: {temprature: 0.5}\n"))
    # The closest known key, and every key the section allows (issue 53).
    assert "did you mean temperature? known: temperature, top_p, seed," in str(caught.value)


def test_an_unknown_key_in_a_list_entry_names_the_entrys_keys(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"agents.0.rol: unknown key \(did you mean role\? known: role, model, name\)"
    ):
        load_config(write(tmp_path, BASE + "agents: [{rol: critic}]\n"))


def test_unknown_strategy_lists_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown strategy 'round_robin'.*one_by_one"):
        load_config(write(tmp_path, BASE + "strategy: round_robin\n"))


def test_the_names_a_config_accepts_are_what_the_stages_implement() -> None:
    """The config validates strategies and data formats against chateval.core.choices'
    registries, whose built-ins name the stages' implementations without importing them: each
    reference resolves to a strategy of that name or a loader of chateval.data, and the
    formats the config knows facts about are registered ones."""
    from chateval.config.data import FIELDS_READ, FILE_RESPONSES_FORMATS
    from chateval.core.choices import DATA_FORMATS, RESPONSES_FORMATS, STRATEGIES
    from chateval.debate.strategies import Strategy

    for name in STRATEGIES:
        strategy = STRATEGIES.get(name)
        assert issubclass(strategy, Strategy) and strategy.name == name
    for formats in (DATA_FORMATS, RESPONSES_FORMATS):
        for name in formats:
            assert callable(loader := formats.get(name)) and loader.__module__.startswith("chateval.data.")
    assert not set(DATA_FORMATS.names()) & set(RESPONSES_FORMATS.names())
    assert set(FILE_RESPONSES_FORMATS) <= set(RESPONSES_FORMATS.names())
    assert set(FIELDS_READ) <= set(DATA_FORMATS.names()) | set(RESPONSES_FORMATS.names())


def test_a_misspelt_format_is_named_before_the_settings_it_would_read(tmp_path: Path) -> None:
    """Issue 53: not "fields.prompt: format 'table_response' does not read it"."""
    text = BASE.replace(
        "{format: jsonl_pairwise, path: x.jsonl}",
        "{format: table_response, path: x.csv, fields: {prompt: p}}",
    )
    with pytest.raises(
        ConfigError, match=r"unknown data format 'table_response' \(did you mean table_responses\?\)"
    ) as caught:
        load_config(write(tmp_path, text))
    assert "fields.prompt" not in str(caught.value)


def test_unknown_backend(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"backend"):
        load_config(write(tmp_path, BASE + "backend: llamacpp\n"))


def test_direct_needs_dimensions(tmp_path: Path) -> None:
    text = BASE.replace("pairwise", "direct", 1)
    with pytest.raises(ConfigError, match="dimensions"):
        load_config(write(tmp_path, text))


def test_overrides(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path, BASE), ["rounds=4", "agents.0.role=editor", "sampling.temperature=0.7"]
    )
    assert config.rounds == 4
    assert config.agents[0].role == "editor"
    assert config.sampling.temperature == 0.7
    assert config.data.path == (tmp_path / "x.jsonl").resolve()


def test_bad_override(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="key=value"):
        load_config(write(tmp_path, BASE), ["rounds"])
    with pytest.raises(ConfigError, match="index"):
        load_config(write(tmp_path, BASE), ["agents.5.role=critic"])


def test_an_override_below_a_value_shows_the_mapping_form() -> None:
    """``data.compare: all_pairs`` is a value: ``--set data.compare.against=X`` cannot go below
    it, and the message gives the form that sets a mapping there (issue 69)."""
    systems = CONFIGS_DIR / "systems_quickstart.yaml"
    with pytest.raises(ConfigError) as caught:
        load_config(systems, ["data.compare.against=brief"])
    assert str(caught.value) == (
        "--set data.compare.against: data.compare is 'all_pairs', not a mapping; to give it a "
        "mapping, set it whole: --set 'data.compare={against: brief}'"
    )
    with pytest.raises(ConfigError, match=r"--set 'data.compare=\{adaptive: \{budget: 8\}\}'"):
        load_config(systems, ["data.compare.adaptive.budget=8"])
    assert load_config(systems, ["data.compare={against: brief}"]).data.design().against == "brief"


def test_a_typo_in_a_settings_mapping_gets_the_closest_key() -> None:
    """A key of a setting that is a name or a mapping (``data.compare``) is suggested as a
    section's key is (issue 69)."""
    systems = CONFIGS_DIR / "systems_quickstart.yaml"
    with pytest.raises(ConfigError) as caught:
        load_config(systems, ["data.compare={againts: brief}"])
    said = "data.compare: againts: unknown key (did you mean against? known: against, opponents, adaptive)"
    assert said in str(caught.value)
    with pytest.raises(
        ConfigError, match=r"adaptive.waves: unknown key \(did you mean wave\? known: budget, wave"
    ):
        load_config(systems, ["data.compare={adaptive: {budget: 8, waves: 2}}"])


def test_unknown_role_is_rejected_when_the_panel_is_built() -> None:
    from chateval.debate.building import build_panel

    with pytest.raises(ConfigError, match=r"unknown role 'jester'.*critic"):
        build_panel(tiny_config(agents=[{"role": "jester"}]))


def test_repeated_roles_get_distinct_names() -> None:
    from chateval.debate.building import build_panel

    panel = build_panel(tiny_config(agents=[{"role": "critic"}, {"role": "critic"}, {"role": "editor"}]))
    assert [a.name for a in panel.agents] == ["Critic 1", "Critic 2", "Editor"]


def test_inline_role() -> None:
    from chateval.debate.building import build_panel

    panel = build_panel(tiny_config(agents=[{"role": {"name": "Poet", "description": "You love rhythm."}}]))
    assert panel.agents[0].role.description == "You love rhythm."


def test_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- a\n- b\n"))


@pytest.mark.parametrize("name", ["../../etc", "a/b", ".hidden", ""])
def test_run_name_cannot_escape_the_runs_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="name"):
        load_config(write(tmp_path, BASE + f"name: '{name}'\n"))


def test_cpu_block_size_must_be_a_multiple_of_32(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from chateval.backends import vllm_backend
    from chateval.core.engine_settings import VllmSettings
    from chateval.core.model_spec import ModelSpec

    monkeypatch.setattr(vllm_backend, "on_gpu", lambda: False)
    with pytest.raises(ConfigError, match=r"vllm.block_size is 48: .* multiples of 32"):
        vllm_backend.VllmBackend("m", tmp_path, ModelSpec(path=tmp_path), VllmSettings(block_size=48))


def test_a_derived_config_replaces_its_bases_systems_and_names_an_inherited_labels_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 53: a config extending the systems quickstart with its own two systems judges
    those two, not five; the base's labels file it keeps is named in a warning."""
    mine = {name: tmp_path / f"{name}.jsonl" for name in ("mine_a", "mine_b")}
    for file in mine.values():
        file.write_text((CONFIGS_DIR / "samples" / "systems" / "brief.jsonl").read_text())
    child = tmp_path / "mine.yaml"
    child.write_text(
        f"extends: {CONFIGS_DIR / 'systems_quickstart.yaml'}\n"
        + "data:\n  path:\n"
        + "".join(f"    {name}: {file}\n" for name, file in mine.items())
    )
    with caplog.at_level("WARNING", logger="chateval"):
        config = load_config(child)
    assert isinstance(config.data.path, dict) and sorted(config.data.path) == ["mine_a", "mine_b"]
    assert "data.labels_file comes from" in caplog.text and "set data.labels_file: null" in caplog.text
    child.write_text(child.read_text() + "  labels_file: null\n")
    caplog.clear()
    with caplog.at_level("WARNING", logger="chateval"):
        assert load_config(child).data.labels_file is None
    assert "labels_file" not in caplog.text


def test_a_lone_referee_defaults_to_one_round_and_is_refused_more() -> None:
    """A one-referee panel is the single-agent baseline (one round); asked for more rounds, a
    new run (and preview, and check) refuses it, since it would quote its own words as the
    discussion. A finished run's config still reads as written."""
    from chateval.debate.building import check_debatable

    lone = tiny_config(agents=[{"role": "critic"}])
    assert lone.rounds == 1
    assert tiny_config().rounds == 2  # two referees: the paper's two rounds
    check_debatable(lone)
    talking_to_itself = tiny_config(agents=[{"role": "critic"}], rounds=3)  # reads (old runs did this)
    with pytest.raises(ConfigError, match=r"rounds: 3 with one agent.*rounds: 1"):
        check_debatable(talking_to_itself)


def test_direct_scoring_gives_the_paper_roles_no_pairwise_job() -> None:
    """The paper's roles' pairwise jobs ("the first to say which answer is the better one",
    "another view when the two answers seem on the same level") are not given to a panel that
    scores one response; a role without a direct text says the same in both tasks."""
    from chateval.debate.building import build_panel
    from chateval.prompts.builder import role_library

    agents = [{"role": "general_public"}, {"role": "critic"}, {"role": "everyday_reader"}]
    dimensions = [{"name": "coherence", "description": "makes sense"}]
    data = {"format": "jsonl_direct", "path": "samples/quickstart_direct.jsonl"}
    direct = build_panel(tiny_config(task="direct", agents=agents, dimensions=dimensions, data=data))
    pairwise = build_panel(tiny_config(agents=agents))
    texts = [a.role.description for a in direct.agents]
    assert not any("answer" in text for text in texts[:2])
    assert texts[:2] == [role_library()[k].direct for k in ("general_public", "critic")]
    assert [a.role.description for a in pairwise.agents] == [
        role_library()[a["role"]].description for a in agents
    ]
    assert texts[2] == role_library()["everyday_reader"].description
