"""The systems a run judged, as a registered table measure (chateval.evaluation.measures) at
metrics.json's ``systems``: win rates, leaderboards and calibrated estimates
(chateval.evaluation.systems.section), laid out as tables (tables.py). Runs that judged no
named systems have none.
"""

from collections.abc import Sequence

from chateval.evaluation.measures import Table
from chateval.evaluation.settings import StatisticsSettings
from chateval.evaluation.systems.section import systems_metrics
from chateval.evaluation.systems.tables import systems_tables
from chateval.schema.run_metrics import DirectSystemsMetrics, PairwiseSystems
from chateval.schema.verdicts import VerdictRecord


class Systems:
    """The systems judged (module doc)."""

    name = "systems"
    title = "systems judged"
    top_level = True

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> PairwiseSystems | DirectSystemsMetrics | None:
        return systems_metrics(settings, records)

    def tables(self, section: PairwiseSystems | DirectSystemsMetrics | None) -> list[Table]:
        return systems_tables(section)


SYSTEMS = Systems()
