"""What the HTML report shows of each run as a whole: its settings, and its metrics as rows
(agreement per aggregation, then the reference rows: baselines and, with opinion probes, the
blind vote against the final decision), read through chateval.reporting.metrics_view.

Plain values only (strings): the templates in ``reporting/templates/`` lay them out and escape them.
"""

from dataclasses import dataclass

from chateval.core.formatting import ci_text
from chateval.evaluation.agreement.correlation_rows import CorrelationRow
from chateval.evaluation.measures import Table, line_titles
from chateval.record.roster import speakers as roster_speakers
from chateval.reporting.html_imported import imported_settings
from chateval.reporting.metrics_view import MetricsView, PairwiseView, run_view
from chateval.reporting.statistics_text import (
    adaptive_text,
    below_baselines,
    requests_by_model,
    store_text,
    turn_text,
)
from chateval.run.finished import FinishedRun


@dataclass(frozen=True)
class RunView:
    """A run's settings, its metrics rows and the columns it adds to the item index."""

    name: str
    settings: dict[str, str]
    metrics: list[list[str]]
    columns: list[str]
    # each table measure's title and tables: the systems judged, the per-model diagnostics
    tables: list[tuple[str, list[Table]]]


def speakers(run: FinishedRun) -> dict[str, tuple[str, str]]:
    """Speaker name -> (role name, model), from the run's roster."""
    return roster_speakers(run.roster)


def _scales_text(run: FinishedRun) -> str:
    dimensions = run.config.dimensions
    if dimensions:
        return "scores " + ", ".join(f"{d.name} {d.low}-{d.high}" for d in dimensions)
    verdict = run.config.verdict
    return f"scores {verdict.low}-{verdict.high}"


def _metrics_settings(view: MetricsView) -> dict[str, str]:
    """The settings lines that read the run's metrics: every registered line measure (one row
    each, ``-`` where a run did not record it, so that runs side by side line up), then the
    verdicts on the panel as a whole. An imported run's only where it measured something: a
    debate's diagnostics cannot exist there."""
    said = dict(view.measure_lines())
    degenerate = "; ".join(view.degenerate_reasons()) or ("no" if view.diagnosed else "-")
    below = below_baselines(view) or ("no" if "baselines" in view.metrics else "-")
    if view.imported is not None:
        return {
            **said,
            **({"panel looks degenerate": degenerate} if degenerate != "-" else {}),
            **({"below a baseline": below} if below != "-" else {}),  # no labels: no baselines
        }
    return {
        **{title: said.pop(title, "-") for title in line_titles()},
        **said,  # sections recorded by measures this installation lacks
        "panel looks degenerate": degenerate,
        "below a baseline": below,
    }


def run_settings(run: FinishedRun) -> dict[str, str]:
    """The config and cost of a run in a few lines a reader compares across runs."""
    config, info = run.config, run.info
    data, verdict, sampling = config.data, config.verdict, config.sampling
    named = speakers(run)
    referees = ", ".join(f"{name} ({model})" for name, (role, model) in named.items() if role != "summarizer")
    if config.strategy == "simultaneous_summarizer" and "Summarizer" in named:
        referees += f"; summarizer ({named['Summarizer'][1]})"
    source = f"{data.format}: {data.path}"
    if data.pair:
        source += f" ({' vs '.join(data.pair)})"
    source += f", first {data.limit}" if data.limit else ""
    settings = {
        "task": run.task,
        "data": source + (f"; {turn_text(data.turn)}" if data.turn else ""),
        "referees": referees or str(info.get("agents")),
        "strategy": f"{info.get('strategy')}, {info.get('rounds')} rounds",
        "answer orders": "both (position calibration)" if info.get("position_calibration") else "as given",
        "verdict": (
            _scales_text(run)
            + (", reasoning first" if verdict.reasoning else ", scores only")
            + (", soft (score probabilities)" if verdict.soft else "")
            + (f"; headline {verdict.aggregation}" if verdict.aggregation == "soft" else "")
        ),
        "extras": ", ".join(
            name for name in ("opinion_probes", "early_stop") if getattr(config, name)
        ).replace("_", " ")
        or "none",
        "sampling": (
            f"temperature {sampling.temperature}, seed {sampling.seed}, "
            f"discussion up to {sampling.discussion_max_tokens} tokens"
        ),
        "backend": ", ".join(f"{m}: {b}" for m, b in (info.get("backends") or {}).items())
        or str(info.get("backend")),
        "cost": (
            f"{info.get('debates')} debates, {info.get('requests')} requests{requests_by_model(info)}, "
            f"{info.get('prompt_tokens')} prompt / {info.get('generated_tokens')} generated tokens, "
            f"{float(info.get('wall_seconds') or 0):.0f} s"
        ),
        "parse failures": str(info.get("verdict_parse_failures")),
        **({"reused": store_text(info["judgment_store"])} if info.get("judgment_store") else {}),
        **({"comparisons": adaptive_text(info["adaptive"])} if info.get("adaptive") else {}),
        **_metrics_settings(run_view(run)),
        "release": f"chateval {info.get('chateval_version')}, started {info.get('started_at')}",
    }
    return imported_settings(run, settings)


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _correlation_cells(name: str, row: CorrelationRow) -> list[str]:
    return [name, row.name, ci_text(row.spearman), ci_text(row.kendall)]


def _reference_rows(view: MetricsView) -> list[list[str]]:
    """Rows under a run's agreement: its reference baselines, then (with opinion probes) its
    referees' blind vote before discussion and its final decision on the same items."""
    sides = {"blind": "blind vote, before discussion", "final": "final, same items"}
    if isinstance(view, PairwiseView):
        rows = [
            [f"baseline: {r.name}" + (" (expected)" if r.expected else ""), str(r.n), _number(r.accuracy)]
            + [_number(r.kappa), ""]
            for r in view.baseline_rows
        ]
        return rows + [
            [sides[r.side], str(r.n), _number(r.first), _number(r.second), ""] for r in view.blind_final_rows
        ]
    rows = []
    if "baselines" in view.metrics:
        rows.append(["baseline: constant score", "every dimension", "undefined", "undefined"])
        rows += [_correlation_cells("baseline: response length", r) for r in view.length_rows]
    return rows + [
        [sides[r.side], "average", _number(r.first), _number(r.second)] for r in view.blind_final_rows
    ]


def metric_rows(run: FinishedRun) -> list[list[str]]:
    """Pairwise: verdicts, n, accuracy, kappa, ties; direct: verdicts, dimension, rho, tau; then
    the reference baselines and the blind vote against the final decision (``_reference_rows``)."""
    view = run_view(run)
    rows = []
    if isinstance(view, PairwiseView):
        for found in view.aggregations:
            if found.panel is None:
                continue
            ties = found.tie_share
            panel = found.panel
            rows.append(
                [
                    found.aggregation,
                    str(panel["n"]),
                    ci_text(panel["accuracy"]),
                    ci_text(panel["kappa"]),
                    "" if ties is None else f"{ties:.0%}",
                ]
            )
    else:
        for aggregation in view.aggregations:
            rows += [_correlation_cells(aggregation.aggregation, r) for r in aggregation.correlations]
    return rows + _reference_rows(view)
