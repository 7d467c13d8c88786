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
A rescore recomputes every registered measure; metrics.json's ``measures`` is an open mapping,
so a new measure leaves the record's schema alone (as inspect_ai's scores).
"""

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from chateval.core.schema.records import VerdictRecord
from chateval.evaluation.settings import StatisticsSettings

Section = dict[str, Any]  # a JSON object


class Measure(Protocol):
    """A registered measure (see the module's docstring)."""

    name: str
    title: str

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        """The measure's section of metrics.json, or None when it has nothing to say of the run."""
        ...

    def text(self, section: Mapping[str, Any]) -> str:
        """The section in words, one line (reports put ``title`` before it)."""
        ...


# name -> "module:attribute" (a built-in, imported on first use) or the measure itself
_REGISTRY: dict[str, str | Measure] = {
    "unanimity": "chateval.evaluation.diagnostics.unanimity:UNANIMITY",
}


def register_measure(measure: Measure) -> None:
    """Add ``measure`` to every run scored from now on in this process (a name taken is an error:
    two measures cannot fill one section)."""
    if measure.name in _REGISTRY and _REGISTRY[measure.name] is not measure:
        raise ValueError(f"a measure named {measure.name!r} is registered already")
    _REGISTRY[measure.name] = measure


def unregister_measure(name: str) -> None:
    """Remove the measure ``name`` (a test's toy measure); an unknown name is ignored."""
    _REGISTRY.pop(name, None)


def _load(entry: str | Measure) -> Measure:
    if not isinstance(entry, str):
        return entry
    module, attribute = entry.split(":")
    measure: Measure = getattr(importlib.import_module(module), attribute)
    return measure


def registered_measures() -> list[Measure]:
    """Every registered measure, in the order of registration."""
    for name, entry in list(_REGISTRY.items()):
        _REGISTRY[name] = _load(entry)
    return [_load(entry) for entry in _REGISTRY.values()]


def measure_sections(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> dict[str, Section]:
    """metrics.json's ``measures``: each registered measure's section, where it has one."""
    sections = {}
    for measure in registered_measures():
        section = measure.compute(settings, records)
        if section is not None:
            sections[measure.name] = section
    return sections


def measure_lines(sections: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(title, text) of each section a run recorded, in registration order; a section no
    registered measure knows (recorded by a measure of another installation) by its name."""
    lines = []
    known = {measure.name: measure for measure in registered_measures()}
    for name, section in sections.items():
        measure = known.get(name)
        if measure is None:
            lines.append((name, "recorded by a measure this installation does not have"))
        else:
            lines.append((measure.title, measure.text(section)))
    return lines
