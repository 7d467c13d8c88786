"""Plain-words lines that read more than one section of a run, shared by the CLI summary,
report.md and the HTML report: a panel below its reference baselines, what an adaptive run
chose to compare, which turn a multi-turn run judged, and each model's requests; and for the
CLI summary, how the soft verdicts' scores were read (each measure says its own section:
chateval.evaluation.measures).

Each reads metrics.json as written by any release: a key an older run lacks gives ``None``,
never an error.
"""

from chateval.reporting.metrics_view import DirectView, MetricsView, PairwiseView, SoftDistributions
from chateval.schema.run_info import AdaptiveInfo, RunInfo, StoreInfo


def below_baselines(view: MetricsView) -> str | None:
    """One line when the panel does no better than a reference baseline (None otherwise):
    pairwise accuracy below always "A", the majority label or a random label; direct average
    Spearman below the response length's."""
    if isinstance(view, PairwiseView):
        panel = view.panel
        if not panel or not view.baseline_rows:
            return None
        value = panel["accuracy"]["value"]
        below = [f"{r.phrase} {r.accuracy:.3f}" for r in view.baseline_rows if value < r.accuracy]
        return f"the panel's accuracy {value:.3f} is below " + ", ".join(below) if below else None
    ours = _average_rho(view)
    length = next((r.spearman for r in view.length_rows if r.name == "average"), None)
    theirs = length["value"] if length else None
    if ours is not None and theirs is not None and ours < theirs:
        return f"the panel's average Spearman {ours:.3f} is below the response length's {theirs:.3f}"
    return None


def _average_rho(view: DirectView) -> float | None:
    """The panel's average Spearman; None when absent or undefined."""
    average = view.panel.get("average") if view.panel else None
    spearman = average.get("spearman") if average else None
    return spearman["value"] if spearman else None


def soft_reading_text(read: SoftDistributions) -> str:
    """How the soft verdicts' scores were read, in words a newcomer can check: how many, how
    unsure the referees were (entropy in bits, with its two landmarks), how much probability
    rests on the estimate for a digit that begins two scores (chateval.judging.soft's
    ``ambiguous``) and how much fell on no score of the scale (``unmapped``)."""
    return (
        f"soft verdicts: {read.scores_read} scores read with their probabilities; mean uncertainty "
        f"{read.mean_entropy_bits:.2f} bits (0: sure of one score, 1: split evenly between two); "
        f"{100 * read.mean_ambiguous:.1f}% of the probability placed by estimate (a first digit "
        f"two scores share, as 1 and 10 do, given to the one nearer the written score); "
        f"{100 * read.mean_unmapped:.1f}% on no score of the scale (left out)"
    )


def adaptive_text(adaptive: AdaptiveInfo) -> str:
    """What a run with the adaptive design chose, in one line."""
    waves = adaptive["waves"]
    return (
        f"adaptive design: {adaptive['chosen']} of {adaptive['candidates']} candidate comparisons "
        f"in {waves} wave{'' if waves == 1 else 's'}; stopped: {adaptive['stop'] or 'not yet'}"
    )


def store_text(store: StoreInfo) -> str:
    """How much of a run the judgment store gave, in one line."""
    reused, judged = store["reused"], store["judged"]
    return (
        f"judgment store: {reused} debate{'' if reused == 1 else 's'} reused, {judged} judged now "
        f"({store['path']})"
    )


def requests_by_model(info: RunInfo) -> str:
    """`` (smollm2-135m: 48, gemma: 48)``, each model's requests, for a panel of several models
    (run.json's ``per_model``); empty for one."""
    counts = info.get("per_model") or {}
    if len(counts) < 2:
        return ""
    return " (" + ", ".join(f"{model}: {c.get('requests', '-')}" for model, c in counts.items()) + ")"


def turn_text(turn: int) -> str:
    """Which turn of each conversation a run judged (``data.turn``), in one line."""
    return f"judged turn {turn} of each conversation; the referees saw the turns before it"
