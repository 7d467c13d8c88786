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
- **4**: the judgment store (chateval.store): a transcript taken from it says where it was
  judged (``reused``: the store key, the run folder and its start), and run.json says which
  store the run used and how many debates it reused and judged (``judgment_store``). Both are
  absent where no store was used, so an earlier folder reads as it is.

A folder or journal of a newer format than this release's is refused (``check_readable``).

Within a format, releases added keys to metrics.json: ``metrics_as_today`` fills in what an
earlier one did not record as today's types say (None where it did not measure; the value
that held then where one did), so readers see today's shape. A few keys stay ``NotRequired``
because their absence says how an earlier release computed a figure (an interval without a
``method``: a percentile bootstrap over prompts). Verdict and transcript records only ever
gained keys (their types mark the later ones ``NotRequired``, and readers treat a missing one
as not recorded), and config.yaml only gained keys with defaults: today's ``RunConfig`` reads
it (chateval.run.finished).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from chateval.errors import ChatEvalError, DataError
from chateval.record.roster import model_entry
from chateval.schema.roster import Roster, RosterReferee
from chateval.schema.run_info import Counts, RunInfo
from chateval.schema.systems import PERCENTILE_BOOTSTRAP
from chateval.schema.transcripts import TurnKind

FORMAT_VERSION = 4
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


@dataclass(frozen=True)
class TodaysPanel:
    """What this release makes of a folder's config.yaml, for a folder of a format that did not
    record its panel (chateval.run.roster.todays_panel builds it): the config's models and
    prompt style, and the panel this release builds from it (its referees with their roles'
    texts, and the summarizer's model); ``refused``: why this release builds none."""

    models: tuple[str, ...]
    prompt_style: str
    referees: tuple[RosterReferee, ...]
    summarizer_model: str
    refused: ChatEvalError | None = None


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


def info_as_today(raw: Mapping[str, Any], source: Path, todays: Callable[[], TodaysPanel]) -> dict[str, Any]:
    """run.json (at ``source``) of any release in today's shape (``format_version`` kept as
    written); a DataError when a newer release wrote it. A format 1 run.json names no referees:
    ``todays`` panel does (the error it was refused with, when this release builds none)."""
    check_readable(folder_format(raw), source)
    info = _counters_as_today(raw)
    info.setdefault("format_version", 1)
    info["per_model"] = {m: counts_as_today(c) for m, c in (info.get("per_model") or {}).items()}
    if "referees" not in info:
        panel = todays()
        if panel.refused is not None:
            raise panel.refused
        info["referees"] = {referee["name"]: referee["model"] for referee in panel.referees}
        info["summarizer_model"] = panel.summarizer_model
    return info


def roster_as_today(info: RunInfo, todays: TodaysPanel) -> Roster:
    """The roster of a folder written before roster.json: its referees and their models as
    run.json names them (format 2; format 1: as ``todays`` panel has them), each with its role
    from config.yaml (built-in roles: this release's texts), its models from run.json (no
    folders or fingerprints recorded then). A panel this release refuses leaves the referees
    run.json names, without their roles."""
    backends = info.get("backends") or {}
    kind = info.get("backend", "")
    roles = {referee["name"]: referee for referee in todays.referees}
    built = {referee["name"]: referee["model"] for referee in todays.referees}
    return {
        "referees": [
            {
                "name": name,
                "role": roles[name]["role"] if name in roles else "",
                "role_text": roles[name]["role_text"] if name in roles else "",
                "model": model,
            }
            for name, model in (info.get("referees") or built).items()
        ],
        "summarizer_model": info.get("summarizer_model", "") or todays.summarizer_model,
        "prompt_style": todays.prompt_style,
        "models": {model: model_entry(backends.get(model, kind), 1, None, None) for model in todays.models},
        "rebuilt": True,
    }


def metrics_as_today(raw: Mapping[str, Any], task: str) -> dict[str, Any]:
    """metrics.json of any release in today's shape, where an earlier one can be read so: what
    it did not record filled in as today's types say (None: not measured; the value that held
    then, where one did). ``raw``'s nested objects are brought to today's shape in place."""
    metrics = dict(raw)
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
    _diagnostics_as_today(metrics)
    if isinstance(systems := metrics.get("systems"), dict):
        _systems_as_today(systems)
    return metrics


def _objects(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a list (none when ``value`` is not one: the record's validation then
    says what is wrong with it)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# The keys of a parroting summary that later releases added: None where the run did not measure them.
_LATER_PARROTING_KEYS = (
    "utterances_that_saw_words",
    "copied_words",
    "words_copy_share",
    "blind_words",
    "blind_words_shared",
    "words_copy_chance",
    "words_copy_chance_reason",
    "blind_verdicts",
    "blind_verdicts_equal",
    "copy_chance",
    "copy_chance_reason",
    "reciting",
    "recitation_share",
    "recitation_reason",
    "copy_permutation_verdicts",
    "copy_permutation_chance",
    "copy_permutation_chance_reason",
)


def _diagnostics_as_today(metrics: dict[str, Any]) -> None:
    """The panel's and each model's parroting with the keys later releases added (None), and
    each model's cut-off turns, empty assessments and scores at the scale's ends (None before
    they were measured)."""
    summaries = [metrics.get("parroting")]
    per_model = metrics.get("per_model")
    for model in per_model.values() if isinstance(per_model, dict) else ():
        if isinstance(model, dict):
            for key in ("cut_off", "empty_assessments", "ceiling"):
                model.setdefault(key, None)
            summaries.append(model.get("parroting"))
    for summary in summaries:
        if isinstance(summary, dict):
            for key in _LATER_PARROTING_KEYS:
                summary.setdefault(key, None)


# Every leaderboard's joint error for its resolved differences before the error was recorded.
_EARLIER_RESOLVED_ALPHA = 0.05


def _systems_as_today(systems: dict[str, Any]) -> None:
    """metrics.json's ``systems`` in today's shape (chateval.schema.run_metrics). Intervals of
    earlier releases keep their own shape, whose missing method says they were a percentile
    bootstrap over prompts (``resamples``: how many), as the systems' tables say."""
    if isinstance(win_rates := systems.get("win_rates"), dict):
        # The first systems releases counted the bootstrap's resamples here (now in the intervals).
        win_rates.pop("resamples", None)
        for row in _objects(win_rates.get("pairs")) + _objects(win_rates.get("overall")):
            if isinstance(rate := row.get("win_rate"), dict):
                rate.setdefault("method", PERCENTILE_BOOTSTRAP)
    for board in (systems.get("leaderboard"), systems.get("length_controlled")):
        if isinstance(board, dict):
            # Before release 4 a board's intervals were a percentile bootstrap and said no
            # method; before release 5 it named no resolved differences; every board's joint
            # error was 0.05 before it was recorded.
            board.setdefault("interval_method", PERCENTILE_BOOTSTRAP)
            board.setdefault("resolved", None)
            board.setdefault("resolved_alpha", _EARLIER_RESOLVED_ALPHA)
    if isinstance(scores := systems.get("scores"), dict):
        scores.setdefault("method", PERCENTILE_BOOTSTRAP)  # direct scoring before release 6
    for estimate in _objects(systems.get("calibrated")):
        estimate.setdefault("quantile", "normal")  # written when the intervals were normal
    if systems.get("task") != "pairwise":
        return
    # Before release 5 no pair was named as left out of the calibrated win rates; before the
    # calibrated leaderboard there was none, and no error.
    systems.setdefault("calibrated_left_out", [])
    systems.setdefault("calibrated_leaderboard", None)
    systems.setdefault("calibrated_leaderboard_error", None)
    if isinstance(board := systems["calibrated_leaderboard"], dict):
        _calibrated_board_as_today(board)


def _calibrated_board_as_today(board: dict[str, Any]) -> None:
    """A calibrated leaderboard in today's shape: normal quantiles before the t ones; before
    release 5 no system named one-sided (release 6: no group) and no labels-only board; before
    release 7 no test of the labelled slice."""
    board.setdefault("quantile", "normal")
    for row in _objects(board.get("rows")):
        if isinstance(field := row.get("field"), dict):
            field.setdefault("quantile", "normal")
    board.setdefault("one_sided", [])
    board.setdefault("one_sided_groups", [])
    board.setdefault("labels_only", False)
    board.setdefault("label_slice", None)


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
