"""The reference baselines a panel's agreement has to beat, as a registered measure
(chateval.evaluation.measures) at metrics.json's ``baselines``: what judges that read nothing
score on the run's human labels. Pairwise: always "A", always the most common human label
(in-sample) and a uniform random label (expected values); direct: a constant score (no rank
correlation: undefined) and the response's length in words as the score.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chateval.core.formatting import ci_text
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_baselines
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.agreement import DirectBaselines, PairwiseBaselines
from chateval.schema.verdicts import VerdictRecord

CONSTANT_BASELINE = (
    "undefined: a constant prediction ranks no response above another, so its rank correlation "
    "with the human scores has no value (it is not 0)"
)


@dataclass(frozen=True)
class BaselineRow:
    """A reference predictor of a pairwise run, scored on the run's human labels."""

    name: str  # 'always "A"', "majority label (A)", "random label"
    phrase: str  # its name inside a sentence: "the majority label (A)", "a random label (expected)"
    n: int
    accuracy: float
    kappa: float
    expected: bool  # expected values (the random label's), not a score of one draw


def pairwise_baseline_rows(found: PairwiseBaselines | None) -> list[BaselineRow]:
    """Always "A", the majority label, a random label (empty: no baselines recorded)."""
    if not found:
        return []
    n, always, majority, random = found["n"], found["always_A"], found["majority"], found["random"]
    named = f"majority label ({majority['label']})"
    return [
        BaselineRow('always "A"', 'always "A"', n, always["accuracy"], always["kappa"], False),
        BaselineRow(named, f"the {named}", n, majority["accuracy"], majority["kappa"], False),
        BaselineRow(
            "random label", "a random label (expected)", n, random["accuracy"], random["kappa"], True
        ),
    ]


def direct_baselines(
    settings: StatisticsSettings, records: Sequence[VerdictRecord]
) -> DirectBaselines | None:
    """Reference predictors on the run's human-scored items: a constant predictor and the
    response's length in words, per scored dimension."""
    labelled = [(r, scores) for r in records if (scores := r.get("human_scores"))]
    if not labelled:
        return None
    out: DirectBaselines = {"constant": CONSTANT_BASELINE}
    if any("response_words" not in r for r, _ in labelled):
        out["response_length_unavailable"] = (
            "the verdict records do not give the responses' lengths (a run of a release before they "
            "were recorded)"
        )
        return out
    dims, seed = settings.dimensions, settings.seed
    truth = {d: [h[d] for _, h in labelled if d in h] for d in dims}
    lengths = {d: [float(r["response_words"]) for r, h in labelled if d in h] for d in dims}
    grouped = all("group" in r for r, _ in labelled)
    groups = {d: [r.get("group", "") for r, h in labelled if d in h] for d in dims}
    scored = [d for d in dims if truth[d]]
    out["response_length"] = direct_metrics(
        {d: truth[d] for d in scored},
        {d: lengths[d] for d in scored},
        seed,
        {d: groups[d] for d in scored} if grouped else None,
    )
    return out


class Baselines:
    """What judges that read nothing score on the same human labels (module doc)."""

    name = "baselines"
    title = "baselines"
    top_level = True
    about = (
        'What judges that read nothing score on the same human labels: pairwise, always "A", always '
        "the most common human label (in-sample) and a uniform random label (expected: accuracy 1/3, "
        "kappa 0); direct, the response's length in words as the score (a constant score has no rank "
        "correlation: undefined). A panel should beat every one."
    )

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> PairwiseBaselines | DirectBaselines | None:
        if settings.task == "direct":
            return direct_baselines(settings, records)
        labels = [label for r in records if (label := r.get("human_label"))]
        return pairwise_baselines(labels) if labels else None

    def text(self, section: Any) -> str:
        """Pairwise: ``always "A" 0.512, majority label (A) 0.512, random label 0.333
        (expected)`` (accuracy); direct: the response-length predictor's average Spearman, or
        why it is absent."""
        if not section:
            return "-"
        if "constant" not in section:  # pairwise
            rows = pairwise_baseline_rows(section)
            return ", ".join(
                f"{r.name} {r.accuracy:.3f}" + (" (expected)" if r.expected else "") for r in rows
            )
        length = section.get("response_length")
        if length is None:
            return f"response length: {section.get('response_length_unavailable', '-')}"
        average = length.get("average")
        spearman = average.get("spearman") if average else None
        return f"response length in words, average rho {ci_text(spearman)}; a constant predictor: undefined"


BASELINES = Baselines()
