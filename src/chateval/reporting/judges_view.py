"""``chateval compare``: judges compared, as tables every output lays out alike (the console,
compare.md, and the HTML report's "Judges compared"): for each two runs, their agreement with
each other and the items each judged that the other lacks, each one's agreement with the
humans (an import's objective labels: the labels) on the same items (paired), their
leaderboards side by side, and the items where they differ most
(chateval.evaluation.agreement.judges). Two arguments that are one run (the same folder, or a
copy: the same run.json ``started_at`` and the same verdicts) agree perfectly with themselves:
a warning says so."""

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from chateval.core.file_access import private_folder
from chateval.core.formatting import ci_text, reading, signed_ci
from chateval.core.textfile import write_text
from chateval.errors import DataError
from chateval.evaluation.agreement.judges import compare_boards, compare_judges
from chateval.evaluation.measures import Table
from chateval.reporting.html_views import item_snippet
from chateval.reporting.imported_runs import labelled_title, labels_kind, shared_kind
from chateval.reporting.measure_views import markdown_table
from chateval.run.finished import FinishedRun, load_finished_run
from chateval.schema.judges import BoardComparison, JudgeComparison
from chateval.schema.verdicts import VerdictRecord

_SNIPPET = 60


def _snippets(run: FinishedRun) -> dict[str, str]:
    """Each item's question (direct: response) start, from the run's items.jsonl."""
    return {item.id: item_snippet(item, _SNIPPET) for item in run.items() or []}


def load_runs(folders: Sequence[Path]) -> list[FinishedRun]:
    """The runs to compare: at least two finished runs of one task; DataError otherwise."""
    if len(folders) < 2:
        raise DataError("compare needs at least two run folders")
    runs = [load_finished_run(folder) for folder in folders]
    tasks = {run.task for run in runs}
    if len(tasks) > 1:
        raise DataError(
            "compare takes runs of one task; got " + ", ".join(f"{r.folder} ({r.task})" for r in runs)
        )
    return runs


def _between_cells(found: JudgeComparison) -> list[str]:
    between: Any = found["between"]  # the task's metrics (pairwise or direct)
    identical = "-" if found["identical"] is None else f"{found['identical']:.0%}"
    if found["task"] == "pairwise":
        kappa = ci_text(between["kappa"]) if between else "-"
        cells = [str(found["shared"]), str(found["decided"]), identical, kappa]
    else:
        average = (between or {}).get("average") or {}
        cells = [str(found["shared"]), str(found["decided"]), identical, ci_text(average.get("spearman"))]
    return [*cells, str(found["only_a"]), str(found["only_b"])]


def _humans_row(a: str, b: str, found: JudgeComparison) -> list[str] | None:
    humans: Any = found["humans"]  # the task's paired comparison
    if not humans:
        return None
    if "mcnemar" in humans:
        accuracy, p_value = humans["accuracy"], humans["mcnemar"]["p_value"]
        return [
            a,
            b,
            str(humans["n"]),
            f"{accuracy['a']:.3f}",
            f"{accuracy['b']:.3f}",
            signed_ci(accuracy["difference"]),
            f"{p_value:.3f}",
            reading(accuracy["difference"], p_value),
        ]
    spearman = (humans.get("average") or {}).get("spearman")
    if not spearman:
        return None
    side = ["undefined" if spearman[k] is None else f"{spearman[k]:.3f}" for k in ("a", "b")]
    return [
        a,
        b,
        str(humans["n"]),
        *side,
        signed_ci(spearman["difference"]),
        "-",
        reading(spearman["difference"]),
    ]


def _board_table(a: str, b: str, boards: BoardComparison) -> Table:
    rows = [[s, str(ranks[0]), str(ranks[1])] for s, ranks in boards["ranks"].items()]
    tau = "undefined (a board ranks every system alike)" if boards["tau"] is None else f"{boards['tau']:.3f}"
    bounds = boards.get("tau_bounds")
    if bounds is None:  # compared before the bounds existed
        said = "no interval"
    else:
        said = (
            f"the judges' tau with unlimited prompts lies in [{bounds[0]:+.3f}, {bounds[1]:+.3f}]: pairs "
            "both boards resolve are fixed, every other pair may go either way"
        )
    notes = [
        f"Kendall's tau-b between the ranks: {tau} ({said}); "
        f"{boards['same_order']} of {boards['pairs']} pairs of systems ordered alike; "
        f"resolved by both the same way: {boards['resolved_both']}, in opposite directions: "
        f"{boards['resolved_opposite']}."
    ]
    return Table(
        f"leaderboards side by side: {a} and {b}", ["system", f"rank in {a}", f"rank in {b}"], rows, notes
    )


def _same_run(
    first: FinishedRun, second: FinishedRun, records_a: list[VerdictRecord], records_b: list[VerdictRecord]
) -> str | None:
    """A warning when ``first`` and ``second`` are one run: the same folder, or a copy of it
    (the same run.json ``started_at`` and the same verdicts); None: two runs."""
    if first.folder.resolve() == second.folder.resolve():
        return (
            f"warning: {first.folder} and {second.folder} are the same run folder: the judge is "
            "compared with itself, so the two agree on every item"
        )
    started = first.info.get("started_at")
    if started is not None and started == second.info.get("started_at") and records_a == records_b:
        return (
            f"warning: {first.folder} and {second.folder} are the same run (a copy: both started at "
            f"{started} and hold the same verdicts): the judge is compared with itself"
        )
    return None


def _differences_table(a: str, b: str, found: JudgeComparison, snippets: dict[str, str], human: str) -> Table:
    """The items where the two differ most; their text's start when a run kept its items."""
    rows = []
    for d in found["most_different"]:
        text = [snippets.get(d["item_id"], "")] if snippets else []
        rows.append([d["item_id"], *text, d["a"], d["b"], d["human"] or "-", f"{d['gap']:g}"])
    gap = "margin gap" if found["task"] == "pairwise" else "mean score gap"
    headers = ["item", *(["text"] if snippets else []), a, b, human, gap]
    note = f"{found['differences']} of {found['decided']} items decided differently; the largest gaps first."
    return Table(f"where {a} and {b} differ most", headers, rows, [note])


def judges_tables(runs: Sequence[FinishedRun]) -> list[Table]:
    """The tables of ``chateval compare`` for every two of ``runs`` (each pair in the order
    named), with a warning under the first for two arguments that are one run. DataError when
    two runs share no item."""
    task = runs[0].task
    pairwise = task == "pairwise"
    labels = shared_kind(labels_kind(run.info) for run in runs)  # human, or an import's objective
    between_rows, humans_rows, extra, warnings = [], [], [], []
    for first, second in combinations(runs, 2):
        seed = first.config.sampling.seed
        records_a, records_b = first.verdicts(), second.verdicts()
        if (warning := _same_run(first, second, records_a, records_b)) is not None:
            warnings.append(warning)
        try:
            found = compare_judges(task, records_a, records_b, seed)
        except ValueError as exc:
            raise DataError(
                f"{first.folder} and {second.folder}: {exc}; compare runs of the same data"
            ) from None
        a, b = first.name, second.name
        between_rows.append([a, b, *_between_cells(found)])
        if (row := _humans_row(a, b, found)) is not None:
            humans_rows.append(row)
        metrics_a: Any = first.metrics or {}  # a pairwise run's systems have leaderboards
        metrics_b: Any = second.metrics or {}
        board_a, board_b = metrics_a.get("systems") or {}, metrics_b.get("systems") or {}
        if board_a.get("leaderboard") and board_b.get("leaderboard"):
            boards = compare_boards(board_a["leaderboard"], board_b["leaderboard"])
            if boards is not None:
                extra.append(_board_table(a, b, boards))
        snippets = _snippets(first) or _snippets(second)
        extra.append(_differences_table(a, b, found, snippets, "human" if labels == "human" else "label"))
    measure = "kappa [95% CI]" if pairwise else "average spearman [95% CI]"
    identical = "identical labels" if pairwise else "equal scores"
    between = Table(
        "agreement between the judges",
        ["A", "B", "items shared", "both decided", identical, measure, "only A judged", "only B judged"],
        between_rows,
        [
            *warnings,
            "B against A as the reference, on the items both decided: the intervals of agreement "
            "with humans (exact binomial; kappa's joined with its bias-corrected bootstrap; "
            "direct: Fisher z). Only A (B) judged: the items one run judged and the other lacks, "
            "left out of every figure here.",
        ],
    )
    value = "accuracy" if pairwise else "average rho"
    humans = Table(
        labelled_title("each against the humans, same items (paired)", labels),
        ["A", "B", "labelled n", f"{value} A", f"{value} B", "B minus A [95% CI]", "McNemar p", "reading"],
        humans_rows,
        [
            "the difference's interval: pairwise, Tango's score interval for paired proportions, "
            "and the exact McNemar test on the items only one got right; direct, Zou's interval "
            "from both sides' Fisher-z intervals."
        ],
    )
    return [between, *([humans] if humans_rows else []), *extra]


def write_compare(tables: Sequence[Table], runs: Sequence[FinishedRun], outdir: Path) -> Path:
    """compare.md in ``outdir``: the tables, as Markdown."""
    private_folder(outdir)
    parts = ["# chateval compare", "", f"Runs: {', '.join(run.name for run in runs)}", ""]
    for table in tables:
        parts += [f"## {table.title}", "", markdown_table(table), ""]
    path = outdir / "compare.md"
    write_text(path, "\n".join(parts))
    return path
