"""Every change of the run folder's format, and how a folder of an earlier release reads today.

run.json's ``format_version`` versions the whole folder (run.json is written last, after every
other file of the run). Folders without it are version 1, written by releases up to 0.1.0:

- **1** (no ``format_version``): run.json's per-model counts call generated and cached prompt
  tokens ``completion_tokens`` and ``cached_tokens``; the first release's run.json and journal
  count backend calls as ``backend_calls`` (later ``batches`` and ``engine_steps``); run.json
  has no referee -> model map; the first releases' metrics.json has its hard agreement at the
  top level, without ``aggregations``, and a direct ``average`` that left undefined dimensions
  out under the paper's name; the first releases' journal records flag hidden turns instead of
  naming each turn's kind.
- **2**: ``format_version`` in run.json and as the journal's first line; every counter has one
  name in code and in every file (``generated_tokens``, ``cached_prompt_tokens``); run.json
  keeps ``referees`` (name -> model) and ``summarizer_model``. metrics.json's win rates of the
  first systems releases have ``resamples`` (dropped: the count is in ``comparisons``).
- **3**: the folder owns what it judged: items.jsonl (the items as debated), roster.json (the
  referees with their roles' texts, the models with their folders and fingerprints) and
  run.json's ``inputs`` (each input file's hash). Every file is validated on read against its
  record type. A folder of an earlier format reads without items (reports say so in one line)
  and with a roster rebuilt from its config.yaml (``roster_as_today``: this release's role
  texts, no model fingerprints).

A folder or journal of a newer format than this release's is refused (``check_readable``).

Verdict and transcript records only ever gained keys (their types mark the later ones
``NotRequired``, and readers treat a missing one as not recorded), and config.yaml only
gained keys with defaults: both read through today's types as they are. So do the
diagnostics of metrics.json, whose later keys are ``NotRequired`` too.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from chateval.config.run import RunConfig
from chateval.core.schema.records import Counts, Roster, RunInfo
from chateval.core.transcript import TurnKind
from chateval.errors import ChatEvalError, DataError

FORMAT_VERSION = 3
# Version 1's names of the counters that have one name since version 2.
_V1_COUNTER_NAMES = {"completion_tokens": "generated_tokens", "cached_tokens": "cached_prompt_tokens"}


def folder_format(info: Mapping[str, Any]) -> int:
    """The format version of a run folder, from its run.json."""
    return int(info.get("format_version", 1))


def check_readable(version: int, path: Path) -> int:
    """``version`` when this release reads it; a DataError naming ``path`` when a newer
    release wrote it (its meaning may have changed in ways this one cannot know)."""
    if version > FORMAT_VERSION:
        raise DataError(
            f"{path}: written in run folder format {version} by a newer chateval; this release "
            f"reads formats up to {FORMAT_VERSION}: upgrade chateval to read it"
        )
    return version


def _counters_as_today(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with its counters under today's names: version 1's token names, and the
    first release's ``backend_calls`` (later split into ``batches`` and ``engine_steps``)."""
    out = {_V1_COUNTER_NAMES.get(key, key): value for key, value in values.items()}
    if "backend_calls" in out:
        out["batches"] = out.pop("backend_calls")
    out.setdefault("batches", 0)
    out.setdefault("engine_steps", 0)
    return out


def counts_as_today(counts: Mapping[str, int]) -> Counts:
    """One model's usage counts (run.json's ``per_model``, a journal step's ``usage``) under
    today's names."""
    return cast(Counts, _counters_as_today(counts))


def config_as_today(tree: Any, source: Path, base_dir: Path) -> RunConfig:
    """config.yaml of any release as today's ``RunConfig`` (keys added since carry their
    defaults); a DataError naming the file when today's schema refuses it."""
    from chateval.config.files import parse_config

    try:
        return parse_config(tree, str(source), base_dir)
    except (ChatEvalError, TypeError, ValueError) as exc:
        raise DataError(f"{source}: this release cannot read the run's config: {exc}") from None


def turn_kind_as_today(record: Mapping[str, Any]) -> TurnKind:
    """The kind of the turn a journal record answers; journals written before turns had kinds only
    flagged hidden turns (``probe``): a check that ended its debate (``verdict``) is told
    apart; other hidden turns read as probes, which ask the same question as a check."""
    if "turn" in record:
        kind: TurnKind = record["turn"]
        return kind
    if record["agent"] is None:
        return "summary"
    if record.get("probe", record["kind"] == "probe"):
        return "check" if record["kind"] == "verdict" else "probe"
    return "verdict" if record["kind"] in ("assessment", "verdict") else "discussion"


def info_as_today(raw: Mapping[str, Any], config: RunConfig, source: Path) -> dict[str, Any]:
    """run.json (at ``source``) of any release in today's shape (``format_version`` kept as
    written); a DataError when a newer release wrote it."""
    check_readable(folder_format(raw), source)
    info = _counters_as_today(raw)
    info.setdefault("format_version", 1)
    info["per_model"] = {m: counts_as_today(c) for m, c in (info.get("per_model") or {}).items()}
    if "referees" not in info:
        from chateval.debate.building import build_panel

        panel = build_panel(config)
        info["referees"] = {agent.name: agent.model for agent in panel.agents}
        info["summarizer_model"] = panel.summarizer_model
    return info


def roster_as_today(config: RunConfig, info: RunInfo) -> Roster:
    """The roster of a folder written before roster.json: its referees and their models as
    run.json names them (format 2; format 1: as this release builds its config's panel), each
    with its role from config.yaml (built-in roles: this release's texts), its models from
    run.json (no folders or fingerprints recorded then)."""
    from chateval.debate.building import build_panel
    from chateval.prompts.builder import Role
    from chateval.record.roster import model_entry

    backends = info.get("backends") or {}
    kind = info.get("backend", "")
    models = {model: model_entry(backends.get(model, kind), 1, None, None) for model in config.model_names()}
    roles: dict[str, Role] = {}
    built: dict[str, str] = {}  # each referee's model, as this release builds the panel
    summarizer = info.get("summarizer_model", "")
    try:
        panel = build_panel(config)
    except ChatEvalError:
        pass  # a panel this release refuses: the referees run.json names, without their roles
    else:
        roles = {agent.name: agent.role for agent in panel.agents}
        built = {agent.name: agent.model for agent in panel.agents}
        summarizer = summarizer or panel.summarizer_model
    unknown = Role("", "")
    return {
        "referees": [
            {
                "name": name,
                "role": roles.get(name, unknown).name,
                "role_text": roles.get(name, unknown).description,
                "model": model,
            }
            for name, model in (info.get("referees") or built).items()
        ],
        "summarizer_model": summarizer,
        "prompt_style": config.prompt_style,
        "models": models,
        "rebuilt": True,
    }


def metrics_as_today(raw: Mapping[str, Any], task: str) -> dict[str, Any]:
    """metrics.json of any release in today's shape, where an earlier one can be read so."""
    metrics = dict(raw)
    win_rates = (metrics.get("systems") or {}).get("win_rates")
    if isinstance(win_rates, dict) and "resamples" in win_rates:
        # The first systems releases counted the bootstrap's resamples here (now in the intervals).
        kept = {key: value for key, value in win_rates.items() if key != "resamples"}
        metrics["systems"] = {**metrics["systems"], "win_rates": kept}
    if "aggregations" not in metrics and "panel" in metrics:
        # Before soft verdicts: the hard verdicts' agreement at the top level only.
        hard = {k: metrics[k] for k in ("items_scored", "panel", "referees") if k in metrics}
        metrics["aggregations"] = {"hard": hard}
    if task == "direct":
        baselines = metrics.get("baselines") or {}
        for correlations in [
            metrics.get("panel"),
            *(block.get("panel") for block in (metrics.get("aggregations") or {}).values()),
            baselines.get("response_length"),
        ]:
            if isinstance(correlations, dict):
                _average_as_today(correlations)
    return metrics


def _average_as_today(correlations: dict[str, Any]) -> None:
    """An earlier release's ``average`` left undefined dimensions out under the paper's name:
    it becomes ``average_defined``, and the paper's average (over every dimension) undefined."""
    average = correlations.get("average")
    if not isinstance(average, dict) or "average_defined" in correlations:
        return
    left_out = average.get("left_out") or {}
    spearman = average.get("spearman")
    if not left_out or spearman is None or spearman.get("value") is None:
        return
    reason = "; ".join(f"{d}: {why}" for d, why in left_out.items())
    undefined = {"value": None, "ci95": None, "reason": reason}
    correlations["average_defined"] = {k: v for k, v in average.items() if k != "left_out"}
    correlations["average"] = {
        "dimensions": [*average["dimensions"], *left_out],
        "spearman": undefined,
        "kendall": dict(undefined),
    }
