"""Measures that plug in: a diagnostic or statistic of a run that fills its own section of
metrics.json (``measures.<name>``) from the verdict records, and says itself in one line that
every report shows (the console summary, report.md and report.html).

Adding one is one module and one registration (docs/architecture.md, "Adding a measure")::

    class LongAnswers:
        name = "long_answers"                  # its section: metrics["measures"]["long_answers"]
        title = "answers over 200 words"       # its label in every report

        def compute(self, settings, records):  # a JSON object, or None: nothing to say
            ...

        def text(self, section):               # the section in words, one line
            ...

    register_measure(LongAnswers())

Built-in entries are lazy (``"module:attribute"``, imported when the registry is first read, as
lm-evaluation-harness registers its tasks), so a measure costs nothing until a run is scored.
A distribution installed beside chateval adds one with an entry point in the group
``chateval.measures`` (``long_answers = my_package.long_answers:LONG_ANSWERS``), with no line
of chateval changed. A rescore recomputes every registered measure; metrics.json's
``measures`` is an open mapping, so a new measure leaves the record's schema alone (as
inspect_ai's scores).

Every section of metrics.json beyond the headline agreement with humans is a registered
measure: the built-ins below (soft vs hard, baselines, position, systems, the debate's effect,
per model, the panel's diagnostics, unanimity) register exactly as one added later would.
Optional attributes place a measure elsewhere: ``top_level = True`` keeps its section at
``metrics[name]``, where releases before the registry wrote it (its type is then part of the
record's schema; a section that is None is left out); ``console_row =
"label"`` shows it as a row of the console's run table, said by ``brief(section)``, instead of a
line under the summary; ``about = "..."`` is a paragraph that report.md puts under the measure's
own heading (what it measures and how to read it), instead of listing it under "Measures".

A measure whose section is best read as tables (the systems' leaderboards, the per-model
diagnostics) has ``tables(section) -> list[Table]`` instead of ``text``: every report lays the
tables out under the measure's title (the console, a rich table; report.md, a Markdown table;
the HTML, a table), each with the sentences that explain it.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from chateval.core.registry import Registry
from chateval.errors import ConfigError
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.verdicts import VerdictRecord

Section = dict[str, Any]  # a JSON object


@dataclass(frozen=True)
class Table:
    """A titled table of text cells, with the sentences that explain it (a table measure's
    output, laid out alike by every report)."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    # The console shows each row as a block of "header: cell" lines (a table too wide for 80
    # columns); report.md and the HTML show it as a table all the same.
    as_records: bool = False


class Measure(Protocol):
    """A registered measure (see the module's docstring)."""

    name: str
    title: str

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        """The measure's section of metrics.json, or None when it has nothing to say of the run."""
        ...

    def text(self, section: Any) -> str:
        """The section in words, one line (reports put ``title`` before it)."""
        ...


class TableMeasure(Protocol):
    """A registered measure whose section reads as tables (see the module's docstring)."""

    name: str
    title: str

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        """The measure's section of metrics.json, or None when it has nothing to say of the run."""
        ...

    def tables(self, section: Any) -> list[Table]:
        """The section as tables (empty: nothing to show)."""
        ...


AnyMeasure = Measure | TableMeasure


def top_level(measure: AnyMeasure) -> bool:
    """The measure's section sits at ``metrics[name]`` (built-ins older than the registry)."""
    return bool(getattr(measure, "top_level", False))


def about(measure: AnyMeasure) -> str | None:
    """The paragraph report.md puts under the measure's own heading; None: listed under
    "Measures"."""
    said = getattr(measure, "about", None)
    return None if said is None else str(said)


def is_table(measure: AnyMeasure) -> bool:
    """The measure's section reads as tables (``tables``), not a line (``text``)."""
    return callable(getattr(measure, "tables", None))


def console_row(measure: AnyMeasure) -> str | None:
    """The label of the measure's row in the console's run table; None: a line under it."""
    label = getattr(measure, "console_row", None)
    return None if label is None else str(label)


def brief(measure: Measure, section: Any) -> str:
    """The measure's text for the console's run table (its ``brief``, else its ``text``)."""
    said = getattr(measure, "brief", measure.text)(section)
    return str(said)


# In the order the reports show them; a built-in is "module:attribute", imported on first use.
MEASURES: Registry[AnyMeasure] = Registry(
    "measure",
    "chateval.measures",
    {
        "soft_vs_hard": "chateval.evaluation.agreement.soft_vs_hard:SOFT_VS_HARD",
        "baselines": "chateval.evaluation.agreement.baselines:BASELINES",
        "position": "chateval.evaluation.agreement.position:POSITION",
        "judgebench": "chateval.evaluation.agreement.judgebench:JUDGEBENCH",
        "systems": "chateval.evaluation.systems.measure:SYSTEMS",
        "verdict_win_rates": "chateval.evaluation.systems.verdict_win_rates:VERDICT_WIN_RATES",
        "debate_effect": "chateval.evaluation.agreement.debate_effect_measure:DEBATE_EFFECT",
        # The results per category before the per-model diagnostics (a block of many lines).
        "categories": "chateval.evaluation.categories:CATEGORIES",
        "per_model": "chateval.evaluation.diagnostics.per_model_measure:PER_MODEL",
        "parroting": "chateval.evaluation.diagnostics.panel_measures:PARROTING",
        "cut_off": "chateval.evaluation.diagnostics.panel_measures:CUT_OFF",
        "empty_assessments": "chateval.evaluation.diagnostics.panel_measures:EMPTY_ASSESSMENTS",
        "ceiling": "chateval.evaluation.diagnostics.panel_measures:CEILING",
        "unanimity": "chateval.evaluation.diagnostics.unanimity:UNANIMITY",
    },
)


def register_measure(measure: AnyMeasure) -> None:
    """Add ``measure`` to every run scored from now on in this process (a name taken is an error:
    two measures cannot fill one section)."""
    MEASURES.register(measure.name)(measure)


def unregister_measure(name: str) -> None:
    """Remove the measure ``name`` (a test's toy); an unknown name is ignored."""
    MEASURES.remove(name)


def registered_measures() -> list[AnyMeasure]:
    """Every registered measure, in the order of registration, then the plugins' by name (each
    imported once); a plugin's measure must be called by its entry point's name, the key of
    its section."""
    measures = []
    for name, measure in MEASURES.items():
        if getattr(measure, "name", None) != name:
            raise ConfigError(
                f"measure {name!r}: {MEASURES.origin(name)} is called "
                f"{getattr(measure, 'name', None)!r}, not {name!r} (its section's key)"
            )
        measures.append(measure)
    return measures


def _recorded(measure: AnyMeasure, metrics: Mapping[str, Any]) -> tuple[bool, Any]:
    """Whether a run's ``metrics`` recorded ``measure``'s section, and the section."""
    sections = metrics if top_level(measure) else metrics.get("measures") or {}
    return measure.name in sections, sections.get(measure.name)


def measure_lines(metrics: Mapping[str, Any], in_console_rows: bool = True) -> list[tuple[str, str]]:
    """(title, text) of each line measure (not a table measure) a run's ``metrics`` recorded,
    in registration order (``in_console_rows=False``: those the console's run table shows left
    out), then each section no registered measure knows (recorded by a measure of another
    installation), by its name."""
    lines = []
    for measure in registered_measures():
        shown, section = _recorded(measure, metrics)
        if shown and not is_table(measure) and (in_console_rows or console_row(measure) is None):
            lines.append((measure.title, cast(Measure, measure).text(section)))
    known = {measure.name for measure in registered_measures()}
    for name in metrics.get("measures") or {}:
        if name not in known:
            lines.append((name, "recorded by a measure this installation does not have"))
    return lines


def measure_tables(metrics: Mapping[str, Any]) -> list[tuple[str, list[Table]]]:
    """(title, tables) of each table measure a run's ``metrics`` recorded with something to
    show, in registration order."""
    found = []
    for measure in registered_measures():
        shown, section = _recorded(measure, metrics)
        if shown and is_table(measure) and (tables := cast(TableMeasure, measure).tables(section)):
            found.append((measure.title, tables))
    return found


def line_titles() -> list[str]:
    """The titles of the registered line measures (the HTML report's settings rows, one per
    measure whether or not each run recorded it)."""
    return [measure.title for measure in registered_measures() if not is_table(measure)]


def console_rows(metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, brief text) of the measures the console's run table shows as rows."""
    rows = []
    for measure in registered_measures():
        label = console_row(measure)
        shown, section = _recorded(measure, metrics)
        if label is not None and shown and not is_table(measure):
            rows.append((label, brief(cast(Measure, measure), section)))
    return rows
