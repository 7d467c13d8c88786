"""Self-contained HTML pages of finished runs: what each referee said, what it scored, and
where the panel disagreed with humans, with itself, or with another run (``chateval report``'s
report.html, beside its report.md: chateval.reporting.report_files).

No network: styles, script and plots (SVG data URIs) are inline, a Content-Security-Policy
forbids every remote load, and every text from a model or a data file goes through Jinja2's
autoescaping (an environment of its own, apart from the prompt templates, which must not
escape). On one page, each item's view is a section shown by CSS ``:target`` when its row is
clicked; a run whose page would pass ``split_above_mb`` gets an index page and one page per
item under ``items/``.
"""

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from chateval.core.file_access import private_folder
from chateval.core.progress import Progress
from chateval.core.textfile import write_text
from chateval.errors import DataError
from chateval.evaluation.measures import Table
from chateval.reporting import plots
from chateval.reporting.html_views import Report, build_report
from chateval.reporting.metrics_view import scored_runs
from chateval.reporting.system_pictures import systems_pictures
from chateval.run.finished import FinishedRun

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
DEFAULT_SPLIT_ABOVE_MB = 8.0
ITEMS_FOLDER = "items"
PAGE = "report.html"


@dataclass(frozen=True)
class Plot:
    caption: str
    uri: str


# What HTML has no place for: C0 controls but tab, newline and carriage return, DEL, C1
# controls, and halves of surrogate pairs. A browser drops a NUL or shows nothing for most; a
# surrogate cannot even be written as UTF-8.
_UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_PICTURES = 0x2400  # U+2400 ␀ is NUL's picture, U+2401 ␁ SOH's, ...
_DELETE_PICTURE = "\u2421"  # ␡
_REPLACEMENT = "\ufffd"  # �: the C1 controls and surrogates have no pictures


def _picture(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code < 0x20:
        return chr(_CONTROL_PICTURES + code)
    return _DELETE_PICTURE if code == 0x7F else _REPLACEMENT


def _visible(value: object) -> object:
    """Jinja's ``finalize``, applied to every value a template prints before it is escaped: a
    control character in a model's or a data file's text (an escaped ``\\u0000`` in an answer)
    shown as its picture (U+2400 ␀ ...), so a reader sees that something was there."""
    if not isinstance(value, str):
        return value
    shown = _UNSHOWABLE.sub(_picture, value)
    return Markup(shown) if isinstance(value, Markup) else shown  # escaped already: kept so


def _environment() -> Environment:
    """The report's own Jinja2 environment: autoescaping on for every template it renders, and
    every printed value's control characters made visible."""
    return Environment(
        loader=PackageLoader("chateval.reporting", "templates"), autoescape=True, finalize=_visible
    )


def report_plots(runs: Sequence[FinishedRun]) -> list[Plot]:
    """The plots of ``chateval report`` that these runs give, as SVG data URIs."""
    candidates = [
        (
            "accuracy and kappa vs number of referees",
            plots.agreement_vs(runs, "agents", "number of referees"),
        ),
        ("accuracy and kappa vs rounds", plots.agreement_vs(runs, "rounds", "rounds")),
        ("per-dimension correlations", plots.dimension_correlations(runs)),
        ("each referee's agreement with humans, and the panel's", plots.referee_agreement(runs)),
    ]
    return [Plot(caption, plots.svg_data_uri(figure)) for caption, figure in candidates if figure is not None]


def system_plots(runs: Sequence[FinishedRun]) -> list[Plot]:
    """The pictures of the systems the runs judged (chateval.reporting.system_pictures), as SVG
    data URIs."""
    return [Plot(picture.caption, plots.svg_data_uri(picture.figure)) for picture in systems_pictures(runs)]


def render_index(report: Report, figures: Sequence[Plot], split: bool, pictures: Sequence[Plot] = ()) -> str:
    """The index page: runs, metrics, the systems' pictures, plots, item rows; with every
    item's view unless ``split``."""
    template = _environment().get_template("index.html.j2")
    return template.render(report=report, plots=figures, pictures=pictures, split=split, csp=CSP)


def render_item_pages(report: Report) -> dict[str, str]:
    """One page per item (file name -> HTML), for runs too large for one page."""
    template = _environment().get_template("item.html.j2")
    return {
        f"{item.anchor}.html": template.render(item=item, report=report, csp=CSP) for item in report.items
    }


def check_split_size(split_above_mb: float) -> None:
    """Refuse a page size no page can be under (before any file is written)."""
    if split_above_mb <= 0:
        raise DataError(f"--split-above must be a positive size in MB, not {split_above_mb}")


def write_html_report(
    folders: Sequence[Path],
    outdir: Path,
    split_above_mb: float = DEFAULT_SPLIT_ABOVE_MB,
    progress: Progress | None = None,
    sections: Sequence[tuple[str, list[Table]]] = (),
) -> Path:
    """Write ``report.html`` for the runs in ``folders`` (``write_html``)."""
    check_split_size(split_above_mb)
    return write_html(scored_runs(folders), outdir, split_above_mb, progress, sections)


def write_html(
    runs: Sequence[FinishedRun],
    outdir: Path,
    split_above_mb: float = DEFAULT_SPLIT_ABOVE_MB,
    progress: Progress | None = None,
    sections: Sequence[tuple[str, list[Table]]] = (),
) -> Path:
    """Write ``report.html`` for one run, or several runs of the same data side by side
    (``html_views.RunsApart`` when they are not: of different tasks, or sharing no item).

    When the single page would be larger than ``split_above_mb``, the index links to one
    page per item in ``items/`` instead of holding every item itself. ``progress`` counts the
    items built (the CLI shows it on large runs); ``sections`` adds headed tables after the
    runs' own (``chateval compare``'s).
    """
    check_split_size(split_above_mb)
    report = dataclasses.replace(build_report(runs, progress), sections=list(sections))
    figures = report_plots(runs)
    pictures = system_plots(runs)
    private_folder(outdir)
    page = render_index(report, figures, split=False, pictures=pictures)
    items = outdir / ITEMS_FOLDER
    remove_item_pages(outdir)  # of an earlier, split render of this report
    if len(page.encode("utf-8")) > split_above_mb * 1e6:
        page = render_index(report, figures, split=True, pictures=pictures)
        private_folder(items)
        for name, text in render_item_pages(report).items():
            write_text(items / name, text)
    path = outdir / PAGE
    write_text(path, page)
    return path


def remove_item_pages(outdir: Path) -> None:
    """The item pages an earlier, split render left in ``outdir``."""
    for stale in (outdir / ITEMS_FOLDER).glob("item-*.html"):
        stale.unlink()


def remove_page(outdir: Path) -> None:
    """An earlier report.html in ``outdir`` and its item pages (a report of other runs, which
    the report.md written there now would contradict)."""
    (outdir / PAGE).unlink(missing_ok=True)
    remove_item_pages(outdir)
