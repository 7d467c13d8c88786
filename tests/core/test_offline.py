"""The settings that keep chateval's processes off the network (offline.py) and the modes of
what it writes (core/file_access.py). The runs that prove nothing leaves the machine are in
tests/end_to_end/test_nothing_leaves.py."""

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ConfigError
from chateval.offline import HUB_OFF, HUB_OPT_IN, LOOPBACK_HOST, TELEMETRY_OFF
from chateval.reporting.markdown import write_report
from chateval.run.runner import run
from tests.support.helpers import ROOT, prompt_dependent, quickstart_config, without_chateval_settings

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def environment_after_import(tmp_path: Path, **extra: str) -> dict[str, str]:
    """os.environ of a process started from a shell without chateval's settings (plus
    ``extra``) once it has imported chateval."""
    probe = "import json, os, chateval; print(json.dumps(dict(os.environ)))"
    env = {**without_chateval_settings(tmp_path), **extra}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_importing_chateval_sets_every_setting_over_the_shells(tmp_path: Path) -> None:
    seen = environment_after_import(tmp_path, DO_NOT_TRACK="0", HF_HUB_OFFLINE="0")
    assert {k: seen.get(k) for k in {**TELEMETRY_OFF, **HUB_OFF}} == {**TELEMETRY_OFF, **HUB_OFF}


def test_hub_lookups_are_an_opt_in_and_telemetry_stays_off(tmp_path: Path) -> None:
    seen = environment_after_import(tmp_path, **{HUB_OPT_IN: "1"})
    assert not any(name in seen for name in HUB_OFF)
    assert {k: seen.get(k) for k in TELEMETRY_OFF} == TELEMETRY_OFF


def test_chateval_env_prints_the_settings_for_servers_and_clusters() -> None:
    plain = CliRunner().invoke(app, ["env"])
    assert plain.exit_code == 0
    assert dict(line.split("=", 1) for line in plain.output.splitlines()) == {
        **TELEMETRY_OFF,
        **HUB_OFF,
        **LOOPBACK_HOST,
    }
    ray = CliRunner().invoke(app, ["env", "--ray"])
    settings = dict(line.split("=", 1) for line in ray.output.splitlines())
    assert (
        settings["http_proxy"] == "http://127.0.0.1:9" and settings["no_proxy"] == "127.0.0.1,localhost,::1"
    )
    assert "VLLM_HOST_IP" not in settings  # a node of a cluster across hosts has its own address


def test_vllm_looks_its_host_address_up_on_loopback_unless_the_shell_names_it(tmp_path: Path) -> None:
    assert environment_after_import(tmp_path)["VLLM_HOST_IP"] == "127.0.0.1"
    assert environment_after_import(tmp_path, VLLM_HOST_IP="10.0.0.7")["VLLM_HOST_IP"] == "10.0.0.7"


def code_commands(doc: Path) -> list[str]:
    """The commands in a doc's code blocks, a command continued over lines as one."""
    commands, inside = [], False
    for line in re.sub(r"\\\n\s*", " ", doc.read_text()).splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            commands.append(line.strip())
    return commands


def test_the_docs_start_servers_and_ray_nodes_with_the_settings() -> None:
    servers = [c for d in DOCS for c in code_commands(d) if "api_server" in c or "vllm serve" in c]
    nodes = [c for d in DOCS for c in code_commands(d) if "bin/ray start" in c]
    assert servers and nodes
    # the checkout's command (.venv/bin/chateval) or an installed one (chateval, docs/cli.md)
    assert all(re.match(r"env \$\((\.venv/bin/)?chateval env\) ", c) for c in servers), servers
    assert all(re.match(r"env \$\((\.venv/bin/)?chateval env --ray\) ", c) for c in nodes), nodes


def scripted_run(out: Path) -> None:
    run(quickstart_config(), out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})


def modes(folder: Path) -> tuple[int, set[int]]:
    return stat.S_IMODE(folder.stat().st_mode), {stat.S_IMODE(f.stat().st_mode) for f in folder.rglob("*")}


def test_a_run_and_its_report_are_the_owners_only_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)  # a permissive shell
    try:
        out = tmp_path / "run"
        run(
            quickstart_config(),
            out,
            backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)},
        )
        write_report([out], out / "report")
    finally:
        os.umask(old)
    assert modes(out) == (0o700, {0o600, 0o700})  # files 0600, the report's folder 0700
    assert modes(out / "report")[0] == 0o700


def test_group_access_is_a_setting_and_a_wrong_value_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHATEVAL_FILE_ACCESS", "group")
    out = tmp_path / "run"
    run(quickstart_config(), out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    assert modes(out) == (0o750, {0o640})
    monkeypatch.setenv("CHATEVAL_FILE_ACCESS", "world")
    with pytest.raises(ConfigError, match="CHATEVAL_FILE_ACCESS='world': use one of owner, group"):
        run(quickstart_config(), tmp_path / "refused", backends={})
    refused = CliRunner().invoke(app, ["roles"])
    assert refused.exit_code == 2 and "CHATEVAL_FILE_ACCESS" in refused.output
