"""Reports over finished run folders: report.md with paper-shaped tables, and PNG plots.

Tables: pairwise runs (accuracy and kappa with 95% CIs next to the reference baselines,
position consistency over decisive items, first-position share, parse failures), direct runs
(Spearman / Kendall per dimension and average), a strategy comparison, and paired comparisons:
each run against the first run of its task, on the items both judged (the differences'
intervals and the exact McNemar test for pairwise accuracy: chateval.evaluation.agreement.paired).
Then every registered measure the runs recorded (chateval.reporting.measure_views): the
reference baselines, the debate's effect, position, the panel's diagnostics, and as tables the
systems judged and the per-model diagnostics; a warning for a panel below a baseline or
degenerate. Plots
(chateval.reporting.plots): accuracy and kappa vs number of referees and vs rounds, per-dimension
correlations, per-referee agreement; and first, for runs that judged named systems, their
pictures (chateval.reporting.system_pictures: leaderboard, win rates, the referees' scores,
win rates per category). A run ``chateval import`` wrote says where its verdicts came from,
its skipped verdicts as skipped, and leaves out what its one judge cannot have
(chateval.reporting.imported_runs).
"""

from collections.abc import Sequence
from pathlib import Path

from chateval.core.file_access import private_folder
from chateval.core.formatting import ci_text, percent, reading, signed_ci
from chateval.core.textfile import write_text
from chateval.evaluation.agreement.baselines import BASELINES
from chateval.evaluation.agreement.paired import compare_direct_records, compare_pairwise_records
from chateval.evaluation.agreement.position import consistency_text
from chateval.reporting import plots
from chateval.reporting.imported_runs import (
    failures_text,
    imported_line,
    imported_run,
    labels_kind,
    labels_name,
)
from chateval.reporting.markdown_direct import direct_table, panel_desc
from chateval.reporting.measure_views import markdown_sections
from chateval.reporting.metrics_view import PairwiseView, run_view, scored_runs
from chateval.reporting.statistics_text import (
    adaptive_text,
    below_baselines,
    requests_by_model,
    store_text,
    turn_text,
)
from chateval.reporting.system_pictures import systems_pictures
from chateval.run.finished import FinishedRun
from chateval.schema.agreement import PairwiseMetrics


def _counts(panel: PairwiseMetrics | None) -> str:
    counts = panel["label_counts"]["predicted"] if panel and "label_counts" in panel else None
    return "/".join(str(counts[k]) for k in ("A", "B", "tie")) if counts else "-"


def pairwise_table(runs: Sequence[FinishedRun]) -> str:
    imported = all(imported_run(run.info) is not None for run in runs)
    lines = [
        "| run | strategy | panel | items | labelled | accuracy [95% CI] | baselines (accuracy) "
        "| kappa [95% CI] | predicted A/B/tie | position consistency (decisive items) "
        f"| first-position wins | {'verdicts skipped' if imported else 'parse failures'} |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run, view in [(run, view) for run in runs if isinstance(view := run_view(run), PairwiseView)]:
        panel, position = view.panel, view.metrics.get("position")
        lines.append(
            f"| {run.name} | {run.info['strategy']} | {panel_desc(run)} | {run.info['items']} "
            f"| {panel['n'] if panel else '-'} | {ci_text(panel['accuracy'] if panel else None)} "
            f"| {BASELINES.text(view.metrics.get('baselines'))} "
            f"| {ci_text(panel['kappa'] if panel else None)} | {_counts(panel)} "
            f"| {consistency_text(position) or '-'} "
            f"| {percent(position.get('first_position_win_share') if position else None)} "
            f"| {failures_text(run.info)} |"
        )
    return "\n".join(lines)


def aggregation_table(runs: Sequence[FinishedRun]) -> str:
    """Each run's hard and soft verdicts side by side: agreement with CIs and the tie share."""
    pairwise = runs[0].info["task"] == "pairwise"
    if pairwise:
        header = (
            "| run | verdicts | items scored | labelled | accuracy [95% CI] | kappa [95% CI] "
            "| tie decisions |"
        )
    else:
        header = "| run | verdicts | items scored | average rho [95% CI] | average tau [95% CI] |"
    lines = [header, "|" + " --- |" * (header.count("|") - 1)]
    for run in runs:
        view = run_view(run)
        if isinstance(view, PairwiseView):
            cells = [
                [row.aggregation, _or_dash(row.items_scored), _or_dash(row.panel["n"] if row.panel else None)]
                + [ci_text(row.accuracy), ci_text(row.kappa)]
                + [percent(row.tie_share)]
                for row in view.aggregations
            ]
        else:
            cells = [
                [found.aggregation, _or_dash(found.items_scored)]
                + [ci_text(found.average.spearman), ci_text(found.average.kendall)]
                for found in view.aggregations
            ]
        lines += ["| " + " | ".join([run.name, *row]) + " |" for row in cells]
        if not view.has_soft and view.imported is None:  # absent, not zero: say why
            lines.append(f"| {run.name} | soft | {view.soft_status or 'not recorded'} |")
    readings = [_soft_reading(run) for run in runs]
    return "\n".join(lines + [""] + [r for r in readings if r])


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _soft_reading(run: FinishedRun) -> str | None:
    """One line: soft minus hard on the run's own items, paired, and what it means."""
    view = run_view(run)
    if isinstance(view, PairwiseView):
        found = view.metrics.get("soft_vs_hard")
        if not found:
            return None
        mcnemar = found["mcnemar"]
        p_value = mcnemar["p_value"]
        return (
            f"- {run.name}: soft minus hard accuracy {signed_ci(found['accuracy']['difference'])}, "
            f"kappa {signed_ci(found['kappa']['difference'])}; only hard right / only soft right "
            f"{mcnemar['a_only_right']} / {mcnemar['b_only_right']}, McNemar p = {p_value:.3f}: "
            f"{reading(found['accuracy']['difference'], p_value)}"
        )
    direct = view.metrics.get("soft_vs_hard")
    average = direct.get("average") if direct else None
    if not direct or not average or "spearman" not in average or "kendall" not in average:
        return None
    return (
        f"- {run.name}: soft minus hard average rho {signed_ci(average['spearman']['difference'])}, "
        f"tau {signed_ci(average['kendall']['difference'])} ({direct['resampled']} resampled): "
        f"{reading(average['spearman']['difference'])}"
    )


def comparison_table(runs: Sequence[FinishedRun]) -> str:
    """Every run against the first run of the same task, on the items both judged."""
    reference = runs[0]
    reference_records = reference.verdicts()
    task = reference.info["task"]
    if task == "pairwise":
        lines = [
            f"| run vs {reference.name} | shared items | accuracy difference [95% CI] | kappa difference "
            "[95% CI] | only ref right / only run right | McNemar p | reading |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
    else:
        lines = [
            f"| run vs {reference.name} | shared items | resampled | average Spearman difference [95% CI] "
            "| average Kendall difference [95% CI] | reading |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
    columns = lines[0].count("|") - 1
    for run in runs[1:]:
        seed = run.config.sampling.seed
        if task == "pairwise":
            pairwise = compare_pairwise_records(reference_records, run.verdicts())
            if pairwise is None:
                lines.append(f"| {run.name} | 0 | no shared labelled items |" + " - |" * (columns - 3))
                continue
            accuracy, mcnemar = pairwise["accuracy"]["difference"], pairwise["mcnemar"]
            lines.append(
                f"| {run.name} | {pairwise['n']} | {signed_ci(accuracy)} "
                f"| {signed_ci(pairwise['kappa']['difference'])} "
                f"| {mcnemar['a_only_right']} / {mcnemar['b_only_right']} | {mcnemar['p_value']:.3f} "
                f"| {reading(accuracy, mcnemar['p_value'])} |"
            )
            continue
        direct = compare_direct_records(reference_records, run.verdicts(), seed)
        if direct is None:
            lines.append(f"| {run.name} | 0 | no shared labelled items |" + " - |" * (columns - 3))
            continue
        average = direct.get("average")
        spearman = average["spearman"]["difference"] if average and "spearman" in average else None
        kendall = average["kendall"]["difference"] if average and "kendall" in average else None
        lines.append(
            f"| {run.name} | {direct['n']} | {direct['resampled']} "
            f"| {signed_ci(spearman) if spearman else '-'} | {signed_ci(kendall) if kendall else '-'} "
            f"| {reading(spearman) if spearman else '-'} |"
        )
    return "\n".join(lines)


def referee_table(runs: Sequence[FinishedRun]) -> str:
    lines = ["| run | referee | accuracy [95% CI] | kappa [95% CI] |", "| --- | --- | --- | --- |"]
    for run in runs:
        view = run_view(run)
        if view.imported is not None and view.imported.one_judge:
            continue  # its one referee's agreement is the panel's
        if isinstance(view, PairwiseView):
            for name, m in (view.metrics.get("referees") or {}).items():
                lines.append(f"| {run.name} | {name} | {ci_text(m['accuracy'])} | {ci_text(m['kappa'])} |")
            continue
        for name, d in (view.metrics.get("referees") or {}).items():
            if average := d.get("average"):
                lines.append(
                    f"| {run.name} | {name} | rho {ci_text(average.get('spearman'))} "
                    f"| tau {ci_text(average.get('kendall'))} |"
                )
    return "\n".join(lines)


def cost_table(runs: Sequence[FinishedRun]) -> str:
    """What each run's debates cost (an imported run ran none: not in it)."""
    lines = [
        "| run | backend | debates | batches / engine steps | requests | prompt tokens | generated tokens "
        "| debate s | wall s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        if imported_run(run.info) is not None:
            continue
        i = run.info
        calls = i["batches"] or i["engine_steps"]  # step barriers count batches, streaming engine steps
        requests = f"{i['requests']}{requests_by_model(i)}"
        lines.append(
            f"| {run.name} | {i['backend']} | {i['debates']} | {calls} | {requests} "
            f"| {i['prompt_tokens']} | {i['generated_tokens']} | {i['debate_seconds']:.0f} "
            f"| {i['wall_seconds']:.0f} |"
        )
    return "\n".join(lines)


def _labels_name(runs: Sequence[FinishedRun]) -> str:
    """How a title names the runs' labels: "human labels", or "labels" when any are objective."""
    return labels_name(labels_kind(run.info) for run in runs)


def _labelled_by(runs: Sequence[FinishedRun]) -> str:
    """Who labelled the items a paired comparison rests on."""
    return "and humans labelled" if _labels_name(runs) == "human labels" else "and labels cover"


def _scores_soft(run: FinishedRun) -> bool:
    """The run scored soft verdicts beside the hard ones (an imported judge: only where its
    file gave them)."""
    view = run_view(run)
    return view.has_soft if imported_run(run.info) is not None else view.has_soft_verdicts


def _warnings(runs: Sequence[FinishedRun]) -> list[str]:
    """A warning per run whose panel is below a reference baseline or looks degenerate."""
    lines = []
    for run in runs:
        view = run_view(run)
        if below := below_baselines(view):
            lines += [f"Warning: {run.name} is below a baseline: {below}.", ""]
        if reasons := view.degenerate_reasons():
            lines += [f"Warning: the panel of {run.name} looks degenerate: {'; '.join(reasons)}.", ""]
    return lines


def _pictures(runs: Sequence[FinishedRun], outdir: Path) -> list[str]:
    """The systems' pictures first, as PNGs beside report.md with their captions: who ranks
    systems reads the pictures before the tables."""
    pictures = systems_pictures(runs)
    if not pictures:
        return []
    parts = ["## Systems at a glance", ""]
    for picture in pictures:
        plots.save_png(picture.figure, outdir / f"{picture.name}.png")
        parts += [f"![{picture.name.replace('_', ' ')}]({picture.name}.png)", "", f"*{picture.caption}*", ""]
    return parts


def write_report(folders: Sequence[Path], outdir: Path) -> Path:
    """Write ``report.md`` and its plots for the runs in ``folders``; return the report path."""
    return write_markdown(scored_runs(folders), outdir)


def write_markdown(runs: Sequence[FinishedRun], outdir: Path) -> Path:
    """Write ``report.md`` and its plots for ``runs`` (each with its metrics: ``scored_runs``)."""
    private_folder(outdir)
    pairwise = [r for r in runs if r.info["task"] == "pairwise"]
    direct = [r for r in runs if r.info["task"] == "direct"]
    parts = ["# chateval report", "", f"Runs: {', '.join(r.name for r in runs)}", ""]
    for run in runs:
        if said := imported_line(run.info):
            parts += [f"{run.name}: {said}", ""]
        if "judgment_store" in run.info:
            parts += [f"{run.name}: {store_text(run.info['judgment_store'])}", ""]
        if "adaptive" in run.info:
            parts += [f"{run.name}: {adaptive_text(run.info['adaptive'])}", ""]
        if run.config.data.turn:
            shown = "report.html shows them with each item"
            parts += [f"{run.name}: {turn_text(run.config.data.turn)} ({shown})", ""]
    for run in runs:
        if changed := run.changed_inputs():
            parts += [
                f"Note: {run.name}: {', '.join(changed)} changed since the run; the numbers are "
                "those of the items it debated (its items.jsonl).",
                "",
            ]
    parts += _pictures(runs, outdir)
    if pairwise:
        against = f"accuracy and Cohen's kappa vs {_labels_name(pairwise)}"
        if not any(run_view(r).panel for r in pairwise):
            against = "no labels: no accuracy or kappa"
        parts += [
            f"## Pairwise comparison ({against})",
            "",
            pairwise_table(pairwise),
            "",
        ]
        by_strategy = [r for r in pairwise if r.info["agents"] > 1]
        if len({r.info["strategy"] for r in by_strategy}) > 1:
            parts += [
                "### Communication strategies",
                "",
                pairwise_table(sorted(by_strategy, key=lambda r: r.info["strategy"])),
                "",
            ]
        for key, label in (("agents", "number of referees"), ("rounds", "rounds")):
            name = f"pairwise_vs_{key}.png"
            if figure := plots.agreement_vs(pairwise, key, label):
                plots.save_png(figure, outdir / name)
                parts += [f"![accuracy and kappa vs {label}]({name})", ""]
    for task, group in (("pairwise", pairwise), ("direct", direct)):
        if group and any(_scores_soft(r) for r in group):
            summed = ", summed over referees and both answer orders (larger wins)"
            summed = summed if task == "pairwise" else ""
            parts += [
                f"## Hard and soft verdicts ({task})",
                "",
                "Hard: the decoded scores. Soft: each score's expected value under the referee's own "
                "probabilities over the scale" + summed + ". Ties: the share of items decided as a tie.",
                "",
                aggregation_table(group),
                "",
            ]
    # Imported scores without human ones have no correlations to show (their import line says the rest).
    if any(imported_run(r.info) is None or run_view(r).panel for r in direct):
        parts += [
            "## Direct scoring (turn-level Spearman rho / Kendall tau vs human scores)",
            "",
            direct_table(direct),
            "",
        ]
        if figure := plots.dimension_correlations(direct):
            plots.save_png(figure, outdir / "direct_dimensions.png")
            parts += ["![per-dimension correlations](direct_dimensions.png)", ""]
    for task, group in (("pairwise", pairwise), ("direct", direct)):
        if len(group) > 1:
            parts += [
                f"## Paired comparisons ({task})",
                "",
                f"Each run against `{group[0].name}` (the first {task} run named) on the items both judged "
                + _labelled_by(group)
                + ": the difference (run minus reference) with its 95% interval"
                + (
                    " (Tango's score interval for paired proportions; kappa's mapped from it), and the "
                    "exact McNemar test on the items only one of the two got right"
                    if task == "pairwise"
                    else " (Zou's, from both runs' Fisher-z intervals; whole dialogues resampled where "
                    "items are grouped)"
                )
                + ". A gap is more than noise when its interval excludes 0.",
                "",
                comparison_table(group),
                "",
            ]
    referees = referee_table(runs)
    if referees.count("\n") > 1:
        parts += ["## Per-referee agreement", "", referees, ""]
        if figure := plots.referee_agreement(runs):
            plots.save_png(figure, outdir / "referees.png")
            parts += ["![each referee's agreement with humans, and the panel's](referees.png)", ""]
    parts += markdown_sections(runs)  # every registered measure (chateval.evaluation.measures)
    parts += _warnings(runs)
    if any(imported_run(run.info) is None for run in runs):
        parts += ["## Cost", "", cost_table(runs), ""]
    report = outdir / "report.md"
    write_text(report, "\n".join(parts))
    return report
