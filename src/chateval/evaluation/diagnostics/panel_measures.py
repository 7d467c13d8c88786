"""The panel's diagnostics over the whole run, as registered measures
(chateval.evaluation.measures): copying and recitation (``parroting``), turns cut off at the
token cap (``cut_off``), empty assessments (``empty_assessments``) and scores at the scale's
ends (``ceiling``).

Their sections keep the top-level keys of metrics.json they had before the registry
(``top_level``), so earlier folders and reports read them where they always were; the console's
run table shows the cut-off turns and the empty assessments next to the parse failures
(``console_row``, said ``brief``ly): scores forced after cut-off reasoning parse fine. The same
diagnostics per model are the ``per_model`` table measure (per_model_measure.py), and
chateval.evaluation.diagnostics.text decides when these sections together make a panel
degenerate.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chateval.evaluation.diagnostics.summary import (
    ceiling_of,
    cut_off_of,
    empty_of,
    parroting_of,
    referee_rows,
)
from chateval.evaluation.diagnostics.text import (
    ceiling_text,
    cut_off_kinds,
    cut_off_text,
    empty_text,
    recitation_text,
)
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.verdicts import VerdictRecord

Of = Callable[[StatisticsSettings, Sequence[VerdictRecord]], Any]


@dataclass(frozen=True)
class PanelMeasure:
    """One of the panel's diagnostics as a measure: how its section is computed (``of``) and
    said (``say``; in the console's run table ``say_briefly``, when it has a ``console_row``)."""

    name: str
    title: str
    of: Of
    say: Callable[[Any], str]
    console_row: str | None = None
    say_briefly: Callable[[Any], str] | None = None
    top_level: bool = True

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Any:
        return self.of(settings, records)

    def text(self, section: Any) -> str:
        return self.say(section)

    def brief(self, section: Any) -> str:
        return (self.say_briefly or self.say)(section)


# Echoes, copies and recitation over every referee; reports show the recitation (copying per model).
PARROTING = PanelMeasure(
    "parroting",
    "recites the item",
    lambda _, records: parroting_of(referee_rows(records), records),
    recitation_text,
)
# Turns that ended at their token cap, per kind, and verdicts resting on a cut-off assessment.
CUT_OFF = PanelMeasure(
    "cut_off",
    "cut off at the token cap",
    lambda _, records: cut_off_of(referee_rows(records), [r["cut_off"] for r in records if "cut_off" in r]),
    cut_off_text,
    console_row="cut off at the token cap",
    say_briefly=cut_off_kinds,
)
# Assessments that came out empty (the referee began with its scores, or wrote nothing).
EMPTY_ASSESSMENTS = PanelMeasure(
    "empty_assessments",
    "empty assessments",
    lambda _, records: empty_of(referee_rows(records)),
    empty_text,
    console_row="empty assessments",
)
# Final verdicts with every score at the scale's top (or bottom), and scores that never vary.
CEILING = PanelMeasure(
    "ceiling",
    "scores at the scale's ends",
    lambda settings, records: ceiling_of(records, settings.scales),
    ceiling_text,
)
