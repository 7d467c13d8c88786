"""The panel's diagnostics in words, for the console summary, report.md and the HTML report,
and when they look like a panel that does not judge (``degenerate_reasons``).

A panel looks degenerate when, over the whole panel:

- more than ``DEGENERATE_SHARE`` of its referees' utterances that saw another referee's words
  repeat a run of them;
- more than ``DEGENERATE_SHARE`` of its verdicts that saw another referee's verdict equal it
  *and* the share exceeds its permutation chance by more than ``COPY_MARGIN`` (copying; beyond
  collapse when that chance is above ``COLLAPSE_SHARE``); when it does not and that chance is
  above ``COLLAPSE_SHARE``, the equality is said to be collapse, not copying
  (chateval.evaluation.diagnostics.verdict_collapse); without a permutation chance nothing is said;
- more than ``DEGENERATE_SHARE`` of its assessments stop at the token cap, or are empty;
- more than ``DEGENERATE_SHARE`` of its final verdicts put every score at the scale's top (or
  bottom);
- a referee's scores (direct: a dimension's) never vary over at least ``CONSTANT_MIN_VERDICTS``
  verdicts;
- more than ``DEGENERATE_SHARE`` of its referees' utterances recite the item's text.

One threshold for every share: "most of what the panel said" is a plain rule a reader can
check, and each of these at a majority means the panel's verdicts rest on something other
than judging the answers.

Metrics of earlier releases arrive in today's shape (chateval.record.migrations): what their
release did not measure is None, said as "-".
"""

from chateval.evaluation.diagnostics.parroting import NOT_RECORDED
from chateval.evaluation.diagnostics.verdict_collapse import COLLAPSE_SHARE, COPY_MARGIN, copying_verdict
from chateval.schema.diagnostics import (
    CutOffSummary,
    EmptyAssessments,
    PanelDiagnostics,
    ParrotingSummary,
    ScoreExtremes,
)

# More than this share (of utterances, verdicts or assessments): a degenerate panel.
DEGENERATE_SHARE = 0.5
EMPTY_ASSESSMENT = "(no explanation: the referee gave only its scores)"
# Where a copy share has no chance level beside it (the reason follows).
NO_CHANCE = "no chance rate to compare"
# The rule ``copying_verdict`` applies, for the reader (lines that fit 80 columns).
COPY_RULE = (
    f"copying: equal verdicts more than {100 * COPY_MARGIN:.0f} points above the rate on another\n"
    f"item; within that of a rate above {100 * COLLAPSE_SHARE:.0f}%: collapse, not copying."
)


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _share(value: float | None, of: int | None, what: str) -> str:
    """``"12.5% of 48 utterances"``; ``"-"`` when there was nothing to count."""
    return "-" if value is None else f"{100 * value:.1f}% of {of} {what}"


def _chance(value: float | None, of: int | None, reason: str | None) -> str:
    """``chance 3.1% of 64``, or why there is no chance rate to compare with."""
    if value is None:
        return f"{NO_CHANCE}: {reason or NOT_RECORDED}"
    return f"chance {100 * value:.1f}% of {of}"


def words_copy_text(parroting: ParrotingSummary | None) -> str:
    """Utterances repeating another referee's words, next to chance; ``"-"`` when not measured."""
    if parroting is None:
        return "-"
    p = parroting
    share = _share(p["words_copy_share"], p["utterances_that_saw_words"], "utterances")
    if p["words_copy_share"] is None and p["words_copy_chance"] is None:
        return share
    chance = _chance(p["words_copy_chance"], p["blind_words"], p["words_copy_chance_reason"])
    return f"{share} ({chance})"


def verdict_copy_text(parroting: ParrotingSummary | None) -> str:
    """Verdicts equal to one their speaker saw, next to the blind-probe chance and the
    permutation chance (the same referee's verdict on another debate), then what that shows:
    ``"50.0% of 32 verdicts (chance 9.4% of 64; on another item 12.5%): copying"``; ``"-"``
    when not measured."""
    p = parroting
    if not p:
        return "-"
    share = _share(p["copy_share"], p["verdicts_that_saw_one"], "verdicts")
    blind = _chance(p["copy_chance"], p["blind_verdicts"], p["copy_chance_reason"])
    permuted = p.get("copy_permutation_chance")
    other = (
        f"on another item {100 * permuted:.1f}%"
        if permuted is not None
        else f"no rate on another item to compare: {p.get('copy_permutation_chance_reason') or NOT_RECORDED}"
    )
    if p["copy_share"] is None:  # no verdict saw another's: nothing to tell apart
        return f"{share} ({blind})"
    verdict = copying_verdict(p)
    return f"{share} ({blind}; {other})" + (f": {verdict}" if verdict else "")


def recitation_text(parroting: ParrotingSummary | None) -> str:
    """Utterances reciting the item's text; ``"-"`` when not measured."""
    if not parroting:
        return "-"
    return _share(parroting["recitation_share"], parroting["utterances"], "utterances")


def cut_off_kinds(cut_off: CutOffSummary | None) -> str:
    """``"264/320 assessments, 3/160 discussions"``: of each kind that ran, the utterances cut
    off at the token cap / all; ``"-"`` when not recorded."""
    if not cut_off:
        return "-"
    kinds = [
        f"{c['cut']}/{c['utterances']} {kind}s"
        for kind, c in (
            ("assessment", cut_off["assessment"]),
            ("discussion", cut_off["discussion"]),
            ("summary", cut_off["summary"]),
        )
        if c["utterances"]
    ]
    return ", ".join(kinds) or "no turns"


def cut_off_text(cut_off: CutOffSummary | None) -> str:
    """``"264/320 assessments, 3/160 discussions; 264/320 verdicts rest on a cut-off
    assessment"``: the turns of each kind that ended at their token cap (kinds that never ran
    left out), then the verdicts whose assessment did; ``"-"`` when not recorded."""
    if not cut_off:
        return "-"
    text, verdicts = cut_off_kinds(cut_off), cut_off["verdicts_with_assessment"]
    if verdicts:
        text += f"; {cut_off['verdicts_cut_off']}/{verdicts} verdicts rest on a cut-off assessment"
    return text


def empty_text(empty: EmptyAssessments | None) -> str:
    """``"32/160 assessments (32/80 verdicts' own)"``: assessments that came out empty;
    ``"no assessments"`` when the run asked for none; ``"-"`` when not recorded."""
    if not empty:
        return "-"
    verdicts = empty["verdicts_with_assessment"]
    own = f"{empty['verdicts_empty']}/{verdicts} verdicts' own"
    if empty["empty"] is None:
        return f"{own} (all assessments: {empty['reason'] or NOT_RECORDED})" if verdicts else "-"
    if not empty["assessments"]:
        return "no assessments"
    return f"{empty['empty']}/{empty['assessments']} assessments ({own})"


def ceiling_text(ceiling: ScoreExtremes | None) -> str:
    """``"87.5% of 32 verdicts every score at the top, 0.0% at the bottom; constant: General
    Public"``; ``"-"`` when not recorded."""
    if not ceiling or not ceiling["verdicts"]:
        return "-"
    top, bottom = ceiling["top_share"] or 0.0, ceiling["bottom_share"] or 0.0
    text = (
        f"{100 * top:.1f}% of {ceiling['verdicts']} verdicts every score at the top, "
        f"{100 * bottom:.1f}% at the bottom"
    )
    constant = _constant(ceiling)
    return text + (f"; constant: {'; '.join(constant)}" if constant else "")


def _constant(ceiling: ScoreExtremes) -> list[str]:
    """``["Critic", "engagingness for Reader"]``: constant referees, then the dimensions that
    never vary for other referees (a constant referee's dimensions all do: not repeated)."""
    constant = ceiling["constant_referees"]
    found = [", ".join(constant)] if constant else []
    for dimension, referees in (ceiling.get("constant_dimensions") or {}).items():
        if others := [r for r in referees if r not in constant]:
            found.append(f"{dimension} for {', '.join(others)}")
    return found


def _copying_reason(p: ParrotingSummary) -> str | None:
    """The degenerate line's words on verdicts equal to one seen (module docstring's rule)."""
    share, chance = p["copy_share"], p.get("copy_permutation_chance")
    if share is None or chance is None or share <= DEGENERATE_SHARE:
        return None
    if (verdict := copying_verdict(p)) and verdict.startswith("copying"):
        return (
            f"{_pct(share)} of verdicts that saw another referee's equal it, against {_pct(chance)} "
            f"on another item: {verdict}"
        )
    if chance > COLLAPSE_SHARE:
        return (
            f"verdicts equal to one seen {_pct(share)}, but a referee's verdict on another item "
            f"matches as often ({_pct(chance)}): collapse, not copying"
        )
    return None


def degenerate_reasons(metrics: PanelDiagnostics) -> list[str]:
    """Why the panel looks degenerate (the module docstring's rules); empty: it does not, or
    the run did not measure it."""
    reasons = []
    parroting = metrics.get("parroting")
    copied = parroting["words_copy_share"] if parroting else None
    if parroting and copied is not None and copied > DEGENERATE_SHARE:
        chance = parroting["words_copy_chance"]
        baseline = (
            f"chance {_pct(chance)}"
            if chance is not None
            else f"{NO_CHANCE}: {parroting['words_copy_chance_reason'] or NOT_RECORDED}"
        )
        reasons.append(f"{_pct(copied)} of referee utterances copy another referee's words ({baseline})")
    if parroting and (copying := _copying_reason(parroting)):
        reasons.append(copying)
    cut_off = metrics.get("cut_off")
    cut = cut_off["assessment"]["share"] if cut_off else None
    if cut is not None and cut > DEGENERATE_SHARE:
        reasons.append(f"{_pct(cut)} of assessments stop at the token cap")
    empty = metrics.get("empty_assessments")
    if empty:
        share = empty["share"] if empty["share"] is not None else empty["verdicts_share"]
        if share is not None and share > DEGENERATE_SHARE:
            reasons.append(f"{_pct(share)} of assessments are empty (the referee gave only its scores)")
    ceiling = metrics.get("ceiling")
    if ceiling:
        for end, share in (("top", ceiling["top_share"]), ("bottom", ceiling["bottom_share"])):
            if share is not None and share > DEGENERATE_SHARE:
                reasons.append(f"{_pct(share)} of verdicts give every score the scale's {end}")
        if constant := _constant(ceiling):
            reasons.append(f"scores never vary: {'; '.join(constant)}")
    recited = parroting["recitation_share"] if parroting else None
    if recited is not None and recited > DEGENERATE_SHARE:
        reasons.append(f"{_pct(recited)} of referee utterances recite the item's text")
    return reasons
