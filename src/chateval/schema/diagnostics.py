"""metrics.json's diagnostics of a panel, over the whole panel and per model
(``chateval.evaluation.diagnostics.summary``): opinion changes, echoes and copies with their chance
baselines, recitation of the item, turns cut off at the token cap, empty assessments, and
scores stuck at the scale's ends or never varying. Keys added by later releases are there in
today's shape, None where an earlier release did not measure them (chateval.record.migrations
fills them in)."""

from typing import NotRequired

from typing_extensions import TypedDict

from chateval.schema.agreement import DirectMetrics, PairwiseMetrics
from chateval.schema.base import record_schema


@record_schema
class OpinionChanges(TypedDict):
    """Over a model's referees' debates with opinion probes: how often the verdict moved."""

    referee_debates: int
    changed_share: float | None  # final verdict differs from the one before any discussion
    mean_changes: float | None  # changes along [before discussion, after round 1, ..., final]


@record_schema
class ParrotingSummary(TypedDict):
    """Echo, recitation and copy shares with their chance baselines
    (chateval.evaluation.diagnostics.parroting.parroting_summary, the permutation chance from
    chateval.evaluation.diagnostics.verdict_collapse); a share is None when there was nothing to count, a
    baseline then says why in ``*_reason``."""

    utterances: int
    echoing: int
    echo_share: float | None
    verdicts_that_saw_one: int
    copied: int
    copy_share: float | None
    # None from here on where the run's release did not measure them (the word copies and the
    # chances came later; chateval.record.migrations fills them in)
    utterances_that_saw_words: int | None
    copied_words: int | None
    words_copy_share: float | None
    blind_words: int | None
    blind_words_shared: int | None
    words_copy_chance: float | None
    words_copy_chance_reason: str | None
    blind_verdicts: int | None
    blind_verdicts_equal: int | None
    copy_chance: float | None
    copy_chance_reason: str | None
    # utterances repeating 8 words in a row of the item's own text (question, answers; dialogue,
    # fact, response); None: not recorded by the run's release
    reciting: int | None
    recitation_share: float | None
    recitation_reason: str | None
    # verdicts that saw another referee's, compared with that referee's verdicts on the other
    # debates of the same answer order: the share equal when nobody could have copied (added to
    # the summary by verdict_collapse.with_permutation_chance; None: not measured)
    copy_permutation_verdicts: NotRequired[int | None]
    copy_permutation_chance: NotRequired[float | None]
    copy_permutation_chance_reason: NotRequired[str | None]


@record_schema
class CutOffKind(TypedDict):
    """Utterances of one kind, those cut off at their token cap, and the share (None: none)."""

    utterances: int
    cut: int
    share: float | None


@record_schema
class CutOffSummary(TypedDict):
    """Turns cut off at the token cap per kind, and verdicts resting on a cut-off assessment."""

    discussion: CutOffKind
    summary: CutOffKind
    assessment: CutOffKind
    verdicts_with_assessment: int
    verdicts_cut_off: int


@record_schema
class EmptyAssessments(TypedDict):
    """Assessments left empty: the referee began with its scores (the assessment is cut where
    the scores start) or wrote nothing (chateval.evaluation.diagnostics.cut_off.empty_summary)."""

    assessments: int | None  # every assessment (probes' and checks' included); None: not recorded
    empty: int | None
    share: float | None
    reason: str | None  # why ``empty`` is None
    verdicts_with_assessment: int  # final verdicts that came after an assessment
    verdicts_empty: int  # of those, the ones whose assessment is empty
    verdicts_share: float | None


@record_schema
class ScoreExtremes(TypedDict):
    """Final verdicts whose every score sits at the scale's top (or bottom), and scores that
    never vary (chateval.evaluation.diagnostics.verdict_collapse.score_extremes)."""

    verdicts: int  # parsed final verdicts (pairwise: one per answer order)
    at_top: int
    top_share: float | None
    at_bottom: int
    bottom_share: float | None
    # referees with at least CONSTANT_MIN_VERDICTS verdicts that are all the same
    constant_referees: list[str]
    # direct: per dimension, the referees whose score in it never varies (same minimum)
    constant_dimensions: NotRequired[dict[str, list[str]]]


@record_schema
class PanelDiagnostics(TypedDict, total=False):
    """metrics.json's ``parroting``, ``cut_off``, ``empty_assessments`` and ``ceiling`` over the
    whole panel (absent in runs of releases before them; None when the run recorded none)."""

    parroting: ParrotingSummary | None
    cut_off: CutOffSummary | None
    empty_assessments: EmptyAssessments | None
    ceiling: ScoreExtremes | None


@record_schema
class PairwiseModelDiagnostics(TypedDict):
    """metrics.json ``per_model`` entry of a pairwise run (chateval.evaluation.diagnostics.summary)."""

    referees: list[str]
    verdicts: int
    agreement_with_panel: float | None  # share of its referees' labels equal to the panel's
    humans: PairwiseMetrics | None
    opinion_changes: OpinionChanges | None
    parroting: ParrotingSummary | None
    cut_off: CutOffSummary | None  # None: not recorded (runs of earlier releases)
    empty_assessments: EmptyAssessments | None
    ceiling: ScoreExtremes | None


@record_schema
class DirectModelDiagnostics(TypedDict):
    """metrics.json ``per_model`` entry of a direct run (chateval.evaluation.diagnostics.summary)."""

    referees: list[str]
    verdicts: int
    mean_abs_diff_from_panel: float | None
    humans: DirectMetrics | None
    opinion_changes: OpinionChanges | None
    parroting: ParrotingSummary | None
    cut_off: CutOffSummary | None  # None: not recorded (runs of earlier releases)
    empty_assessments: EmptyAssessments | None
    ceiling: ScoreExtremes | None
