"""The roster of a panel (roster.json's shape, chateval.schema.roster): the one a run writes,
and the one this release builds from the config.yaml of a folder written before run folders
recorded their panel (chateval.record.migrations reads such a folder through it)."""

from collections.abc import Mapping

from chateval.config.run import RunConfig
from chateval.debate.building import build_panel
from chateval.debate.panel import Panel
from chateval.errors import ChatEvalError
from chateval.record.migrations import TodaysPanel
from chateval.schema.roster import Roster, RosterModel, RosterReferee


def _referees(panel: Panel) -> list[RosterReferee]:
    return [
        {"name": a.name, "role": a.role.name, "role_text": a.role.description, "model": a.model}
        for a in panel.agents
    ]


def panel_roster(panel: Panel, prompt_style: str, models: Mapping[str, RosterModel]) -> Roster:
    """The roster of ``panel`` with its ``models``' entries."""
    return {
        "referees": _referees(panel),
        "summarizer_model": panel.summarizer_model,
        "prompt_style": prompt_style,
        "models": dict(models),
    }


def todays_panel(config: RunConfig) -> TodaysPanel:
    """The panel this release builds from a folder's ``config`` (built-in roles: this release's
    texts), or why it refuses to."""
    models, style = tuple(config.model_names()), config.prompt_style
    try:
        panel = build_panel(config)
    except ChatEvalError as refused:
        return TodaysPanel(models, style, (), "", refused)
    return TodaysPanel(models, style, tuple(_referees(panel)), panel.summarizer_model)
