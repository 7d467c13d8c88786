"""``chateval report``: one command, one folder: report.md with its PNG pictures and
report.html beside it, both of the same runs.

Where: ``RUN/report`` for one run (the report travels with its run folder), ``./report`` for
several (a comparison belongs to none of them), unless ``-o`` says. report.html puts several
runs side by side only when they are of one task and share items (it lines them up by item
id); when they are not, report.md is written alone and the reason said (each run's own report
has its page), and a report.html an earlier report left there is removed.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chateval.core.progress import Progress
from chateval.reporting.html import DEFAULT_SPLIT_ABOVE_MB, check_split_size, remove_page, write_html
from chateval.reporting.html_views import RunsApart
from chateval.reporting.markdown import write_markdown
from chateval.reporting.metrics_view import scored_runs

REPORT_FOLDER = "report"


@dataclass(frozen=True)
class Written:
    """What ``write_reports`` wrote: report.md, report.html (None: not written, ``why_no_html``
    says why)."""

    markdown: Path
    html: Path | None
    why_no_html: str | None = None


def default_outdir(folders: Sequence[Path]) -> Path:
    """Where a report goes without ``-o``: its run folder's ``report/`` for one run, the working
    folder's for several."""
    return folders[0] / REPORT_FOLDER if len(folders) == 1 else Path(REPORT_FOLDER)


def write_reports(
    folders: Sequence[Path],
    outdir: Path,
    split_above_mb: float = DEFAULT_SPLIT_ABOVE_MB,
    progress: Progress | None = None,
) -> Written:
    """Write report.md (and its pictures) and report.html of the runs in ``folders`` into
    ``outdir``; nothing when a folder is not a scored, finished run (the DataError names it)."""
    check_split_size(split_above_mb)
    runs = scored_runs(folders)
    markdown = write_markdown(runs, outdir)
    try:
        return Written(markdown, write_html(runs, outdir, split_above_mb, progress))
    except RunsApart as exc:
        remove_page(outdir)
        return Written(markdown, None, str(exc))
