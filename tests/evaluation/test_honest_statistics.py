"""Statistics that do not flatter, against hand-computed values: position consistency over
decisive items, undefined correlations, item-clustered per-model intervals, reference
baselines, unlabelled items in ``n``, and the debate's effect against the blind vote."""

from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from scipy.stats import spearmanr

from chateval.config.files import load_config
from chateval.evaluation.agreement.debate_effect import blind_label, debate_effect
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_baselines, pairwise_metrics
from chateval.evaluation.agreement.position import consistency_text as position_text
from chateval.evaluation.bootstrap import MIN_DEFINED_SHARE, N_RESAMPLES, resample_indices
from chateval.evaluation.diagnostics.summary import per_model
from chateval.evaluation.run_metrics import compute_metrics
from chateval.judging.aggregate import position_stats
from chateval.reporting.html_views import metric_rows
from chateval.reporting.markdown import write_report
from chateval.reporting.metrics_view import metrics_view
from chateval.reporting.statistics_text import below_baselines
from chateval.reporting.summary import print_summary
from chateval.run.finished import load_finished_run
from chateval.run.runner import run
from chateval.run.statistics import statistics_settings
from chateval.schema.verdicts import VerdictRecord
from tests.support.helpers import CONFIGS_DIR, tiny_config
from tests.support.scripted import steady_and_swayed_backends, steady_and_swayed_config


def pairwise_record(
    item_id: str,
    human: str | None,
    label: str | None,
    referee_labels: dict[str, str],
    order_labels: tuple[str | None, ...] = ("tie",),
    rows: list[list[dict[str, Any]]] | None = None,
) -> VerdictRecord:
    orders = [
        {"swapped": i == 1, "label": x, "referees": rows[i] if rows else []}
        for i, x in enumerate(order_labels)
    ]
    return cast(
        VerdictRecord,
        {
            "item_id": item_id,
            "orders": orders,
            "referee_labels": referee_labels,
            "label": label,
            "human_label": human,
            "parse_failures": 0,
        },
    )


# --- position consistency ------------------------------------------------------------------


def test_position_consistency_counts_decisive_items_only() -> None:
    pairs = [("A", "A"), ("A", "B"), ("A", "tie"), ("tie", "tie"), ("tie", "tie"), ("tie", "tie"), ("B", "B")]
    records = [pairwise_record(str(i), "A", "A", {}, pair) for i, pair in enumerate(pairs)]
    records.append(pairwise_record("one order", "A", "A", {}, ("A",)))  # not in both orders
    records.append(pairwise_record("failed", "A", None, {}, (None, None)))  # every verdict failed
    stats = position_stats(records)
    assert stats["items_in_both_orders"] == 8
    assert stats["tie_in_both_orders"] == 3  # reported apart, not as agreement
    assert stats["decisive_items"] == 4  # A/A, A/B, A/tie, B/B
    assert stats["decisive_consistency"] == pytest.approx(2 / 4)  # A/A and B/B
    assert stats["decisive_flip_share"] == pytest.approx(1 / 4)  # A/B; A/tie is no flip
    assert position_text(stats) == (
        "50.0% of the 4 items with a winner in at least one answer order keep that winner when the "
        "answers swap places (the other answer wins in 25.0%; one order is a tie in 25.0%); 3 of 8 "
        "items tie in both orders"
    )


def test_all_ties_have_no_consistency_and_old_runs_say_what_theirs_meant() -> None:
    stats = position_stats([pairwise_record("1", "A", "tie", {}, ("tie", "tie"))])
    assert stats["decisive_consistency"] is None and stats["decisive_flip_share"] is None
    assert (
        position_text(stats) == "no item has a winner in either answer order; 1 of 1 items tie in both orders"
    )
    old = {"items_in_both_orders": 80, "consistency": 0.9375}
    assert position_text(old) == (
        "93.8% of all items get the same verdict in both answer orders (a tie in both counted as the "
        "same; chateval rescore counts those apart)"
    )


# --- undefined correlations ------------------------------------------------------------------


def test_a_constant_prediction_has_no_correlation_and_leaves_the_average_undefined() -> None:
    """A constant dimension's correlation is undefined, and so is the average over the
    dimensions (the paper's); the average of the others is reported apart, naming them.
    (Until this release the average left the dimension out under the paper's name.)"""
    truth = {"naturalness": [1, 2, 3, 4, 5], "coherence": [1, 2, 3, 4, 5]}
    pred = {"naturalness": [2, 2, 2, 2, 2], "coherence": [1, 3, 2, 4, 5]}
    out = direct_metrics(truth, pred)
    flat = out["dimensions"]["naturalness"]["spearman"]
    assert flat["value"] is None and flat["ci95"] is None
    assert flat["reason"].startswith("constant prediction")
    assert out["average"]["dimensions"] == ["naturalness", "coherence"]
    assert out["average"]["left_out"] == {"naturalness": flat["reason"]}
    assert out["average"]["spearman"]["value"] is None
    assert out["average"]["spearman"]["reason"] == f"naturalness: {flat['reason']}"
    coherence = out["dimensions"]["coherence"]
    defined = out["average_defined"]
    assert defined["dimensions"] == ["coherence"] and defined["left_out"] == {"naturalness": flat["reason"]}
    assert defined["spearman"]["value"] == pytest.approx(coherence["spearman"]["value"])
    assert coherence["spearman"]["value"] == pytest.approx(spearmanr([1, 2, 3, 4, 5], [1, 3, 2, 4, 5])[0])
    nothing = direct_metrics({"coherence": [1, 2, 3]}, {"coherence": [3, 3, 3]})
    assert (
        nothing["average"]["dimensions"] == ["coherence"] and nothing["average"]["spearman"]["value"] is None
    )
    assert "average_defined" not in nothing  # no dimension is defined: nothing to average
    assert "average_defined" not in direct_metrics(truth, {**pred, "naturalness": [1, 2, 3, 5, 4]})


def test_undefined_resamples_are_counted_and_left_out_of_the_interval() -> None:
    truth = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    pred = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0]  # a resample without the last item predicts a constant
    out = direct_metrics({"coherence": truth}, {"coherence": pred}, seed=7)["dimensions"]["coherence"]
    t, p = np.asarray(truth), np.asarray(pred)
    defined = [spearmanr(t[i], p[i])[0] for i in resample_indices(6, 7) if len(set(p[i])) > 1]
    rho = out["spearman"]
    assert rho["resamples"] == N_RESAMPLES
    assert rho["undefined_resamples"] == N_RESAMPLES - len(defined) > 0  # about (5/6)^6 of them
    assert rho["value"] == pytest.approx(spearmanr(t, p)[0])
    # Fisher's z of the defined resamples only, their spread scaled for 6 items, t with 5 df
    # (at least Fisher's 1 / sqrt(6 - 3)).
    spread = max(np.std(np.arctanh(np.clip(defined, -0.995, 0.995))) * np.sqrt(6 / 5), 1 / np.sqrt(3))
    centre = np.arctanh(rho["value"])
    expected = np.tanh([centre - 2.5706 * spread, centre + 2.5706 * spread])
    assert rho["ci95"] == pytest.approx(list(expected), abs=1e-4)
    assert rho["method"] == "fisher-z"


def test_too_few_defined_resamples_give_no_interval() -> None:
    truth = [1.0] * 9 + [2.0]  # only item 9 varies the human scores
    pred = [2.0] + [1.0] * 9  # only item 0 varies the prediction
    out = direct_metrics({"coherence": truth}, {"coherence": pred}, seed=3)["dimensions"]["coherence"]
    draws = resample_indices(10, 3)
    defined = sum(1 for i in draws if 0 in i and 9 in i)  # both sides vary only with both drawn
    assert defined < MIN_DEFINED_SHARE * N_RESAMPLES  # about 42%
    rho = out["spearman"]
    assert rho["value"] is not None and rho["ci95"] is None
    assert rho["undefined_resamples"] == N_RESAMPLES - defined
    assert rho["reason"] == f"only {defined} of {N_RESAMPLES} resamples defined"


# --- clustered per-model intervals -----------------------------------------------------------


def test_per_model_intervals_resample_items_with_all_their_referee_rows() -> None:
    rng = np.random.default_rng(4)
    humans = list(rng.choice(["A", "B", "tie"], size=40))
    labels = [h if rng.random() < 0.5 else "tie" for h in humans]
    # Two referees of one model that always agree: twice the rows, no more evidence.
    records = [
        pairwise_record(f"q{i}", h, label, {"R1": label, "R2": label})
        for i, (h, label) in enumerate(zip(humans, labels, strict=True))
    ]
    humans_metrics = per_model("pairwise", records, {"R1": "m", "R2": "m"}, seed=5)["m"]["humans"]
    alone = pairwise_metrics(humans, labels, seed=5)
    assert humans_metrics["n"] == 80 and humans_metrics["resampled"] == "40 items"
    for statistic in ("accuracy", "kappa"):  # the evidence of 40 items, not of 80 rows
        pooled, single = humans_metrics[statistic], alone[statistic]
        assert pooled["value"] == pytest.approx(single["value"])
        assert single["effective_n"] == 40 and pooled["method"].startswith("clopper-pearson-clustered")
        # 40 items less the t quantile's 39 degrees of freedom: (1.96 / 2.02)^2 of them
        assert 37 < pooled["effective_n"] < 40
        assert np.diff(pooled["ci95"])[0] >= np.diff(single["ci95"])[0]
    rows_as_independent = pairwise_metrics(
        [h for h in humans for _ in range(2)], [x for x in labels for _ in range(2)], seed=5
    )
    width = np.diff(humans_metrics["accuracy"]["ci95"])[0]
    assert np.diff(rows_as_independent["accuracy"]["ci95"])[0] < width  # what pooling rows did


def test_per_model_direct_intervals_resample_dialogues() -> None:
    records = [
        cast(
            VerdictRecord,
            {
                "item_id": str(i),
                "group": f"d{i // 3}",
                "human_scores": {"coherence": float(i % 4)},
                "scores": {"coherence": float(i % 3)},
                "referees": [
                    {"agent": a, "scores": {"coherence": (i * 7 + k) % 5}} for k, a in enumerate(("R1", "R2"))
                ],
                "parse_failures": 0,
            },
        )
        for i in range(12)
    ]
    humans = per_model("direct", records, {"R1": "m", "R2": "m"}, seed=0)["m"]["humans"]
    assert humans["resampled"] == "4 groups"
    assert humans["dimensions"]["coherence"]["n"] == 24


# --- reference baselines ---------------------------------------------------------------------


def test_pairwise_baselines_by_hand() -> None:
    out = pairwise_baselines(["B", "B", "A", "tie", "B", "A"])
    # always A: right on 2 of 6; a constant prediction agrees no more than chance: kappa 0.
    assert out["always_A"] == {"accuracy": pytest.approx(2 / 6), "kappa": pytest.approx(0.0)}
    assert out["majority"] == {"label": "B", "accuracy": pytest.approx(3 / 6), "kappa": pytest.approx(0.0)}
    assert out["random"] == {"accuracy": pytest.approx(1 / 3), "kappa": 0.0}
    assert out["n"] == 6
    assert pairwise_baselines(["A", "B"])["majority"]["label"] == "A"  # equal counts: first label


def test_a_panel_below_its_baselines_is_said_so() -> None:
    baselines = pairwise_baselines(["A"] * 41 + ["B"] * 25 + ["tie"] * 14)
    metrics = {"panel": {"accuracy": {"value": 0.2, "ci95": [0.1, 0.3]}}, "baselines": baselines}
    assert below_baselines(metrics_view("pairwise", metrics)) == (
        'the panel\'s accuracy 0.200 is below always "A" 0.512, the majority label (A) 0.512, '
        "a random label (expected) 0.333"
    )
    metrics["panel"]["accuracy"]["value"] = 0.6
    assert below_baselines(metrics_view("pairwise", metrics)) is None


def test_unlabelled_items_count_as_wrong_and_baselines_are_in_metrics() -> None:
    records = [
        pairwise_record("q1", "A", "A", {"Critic": "A", "Everyday Reader": "A"}),
        pairwise_record("q2", "B", "B", {"Critic": "B"}),  # Everyday Reader's verdict failed
        pairwise_record("q3", "B", None, {}),  # every verdict failed
        pairwise_record("q4", "A", "tie", {"Critic": "tie", "Everyday Reader": "tie"}),
    ]
    metrics = compute_metrics(statistics_settings(tiny_config()), records)
    assert metrics["items_scored"] == 3
    panel = metrics["panel"]
    assert panel["n"] == 4 and panel["no_label"] == 1
    assert panel["accuracy"]["value"] == pytest.approx(2 / 4)  # not 2 / 3
    reader = metrics["referees"]["Everyday Reader"]
    assert reader["n"] == 4 and reader["accuracy"]["value"] == pytest.approx(1 / 4)
    assert metrics["baselines"]["always_A"]["accuracy"] == pytest.approx(2 / 4)


def test_direct_baselines_constant_and_response_length() -> None:
    config = load_config(CONFIGS_DIR / "quickstart_direct.yaml")
    words = [3, 9, 4, 12, 7, 5]
    human = [1.0, 2.5, 1.5, 3.0, 2.0, 2.0]
    records = [
        cast(
            VerdictRecord,
            {
                "item_id": str(i),
                "referees": [],
                "scores": {"coherence": 2.0},
                "human_scores": {"coherence": h, "naturalness": 2.0},
                "response_words": w,
                "parse_failures": 0,
            },
        )
        for i, (w, h) in enumerate(zip(words, human, strict=True))
    ]
    baselines = compute_metrics(statistics_settings(config), records)["baselines"]
    assert baselines["constant"].startswith("undefined")
    length = baselines["response_length"]["dimensions"]
    assert length["coherence"]["spearman"]["value"] == pytest.approx(spearmanr(words, human)[0])
    assert length["naturalness"]["spearman"]["value"] is None  # constant human scores
    assert "engagingness" not in length  # no human scores for it
    for r in records:
        del r["response_words"]  # a run of an earlier release: no lengths, and it says so
    assert "response_length_unavailable" in compute_metrics(statistics_settings(config), records)["baselines"]


# --- does the debate help? -------------------------------------------------------------------


def probed_record(item_id: str, human: str, blind: list[str | None], final: str) -> VerdictRecord:
    rows = [{"agent": f"R{k}", "opinions": [label, final]} for k, label in enumerate(blind)]
    return pairwise_record(item_id, human, final, {}, (final,), [rows])


def test_debate_effect_against_the_blind_majority_by_hand() -> None:
    records = [
        probed_record("0", "A", ["A", "A", "B"], "B"),  # blind only right
        *(probed_record(str(i), "B", ["A", "A", None], "B") for i in range(1, 7)),  # final only right
        probed_record("7", "A", ["A", "B", "A"], "A"),  # both right
        probed_record("8", "B", ["B", "B", "B"], "B"),  # both right
        probed_record("9", "A", ["B", "tie", "A"], "B"),  # both wrong (blind: no majority, a tie)
        probed_record("10", "A", [None, None, None], "A"),  # no blind label: left out
    ]
    assert blind_label(records[9]) == "tie"
    effect = debate_effect("pairwise", records, seed=0)
    assert effect is not None
    assert effect["blind_rule"].startswith("strict majority")
    assert effect["items"] == 10 and effect["left_out"] == 1
    assert effect["changed"] == 8  # items 0-6 and 9
    found = effect["comparison"]
    assert found["accuracy"]["blind"] == pytest.approx(3 / 10)
    assert found["accuracy"]["final"] == pytest.approx(8 / 10)
    assert found["mcnemar"]["blind_only_right"] == 1 and found["mcnemar"]["final_only_right"] == 6
    # Two-sided exact binomial on 7 discordant items: 2 * P(X <= 1 | n=7, p=1/2) = 2 * 8 / 128.
    assert found["mcnemar"]["p_value"] == pytest.approx(16 / 128)


def test_calibrated_blind_label_sums_scores_without_failed_referees() -> None:
    order_1 = [
        {"agent": "R1", "opinions": ["A"], "opinion_scores": [[8, 3]]},
        {"agent": "R2", "opinions": ["B"], "opinion_scores": [[1, 9]]},
    ]
    order_2 = [
        {"agent": "R1", "opinions": ["B"], "opinion_scores": [[4, 6]]},
        {"agent": "R2", "opinions": [None], "opinion_scores": [None]},  # failed: R2 left out of both
    ]
    record = pairwise_record("q", "A", "B", {}, ("A", "B"), [order_1, order_2])
    assert blind_label(record) == "A"  # R1 alone: A 12, B 9 (with R2's first order: B)
    effect = debate_effect("pairwise", [record])
    assert effect is not None and effect["blind_rule"].startswith("round-0 probe scores summed")
    assert effect["changed"] == 1


def test_scripted_run_with_probes_reports_the_debate_effect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both referees first prefer the answer shown first (A); after the discussion one moves to
    B, so the final majority of two is a tie on both items (human labels: A, then B)."""
    result = run(
        steady_and_swayed_config(opinion_probes=True), tmp_path, backends=steady_and_swayed_backends()
    )
    assert result.metrics is not None
    effect = result.metrics["debate_effect"]
    assert effect["items"] == 2 and effect["changed"] == 2
    accuracy = effect["comparison"]["accuracy"]
    assert (accuracy["blind"], accuracy["final"]) == (0.5, 0.0)
    assert effect["comparison"]["mcnemar"]["p_value"] == 1.0
    # Every report says it: the CLI summary, report.md's lines and the HTML report's rows.
    print_summary(result)
    said = capsys.readouterr().out
    assert "the debate's effect: accuracy blind 0.500, final 0.000 on 2 items" in said
    assert "below baseline: the panel's accuracy 0.000 is below" in said
    summary = load_finished_run(tmp_path)
    report = write_report([tmp_path], tmp_path / "md").read_text()
    assert "## The debate's effect" in report and "- test: accuracy blind 0.500, final 0.000" in report
    assert "Warning: test is below a baseline: the panel's accuracy 0.000 is below" in report
    rows = metric_rows(summary)
    assert ["blind vote, before discussion", "2", "0.500", "0.000", ""] in rows
    assert ['baseline: always "A"', "2", "0.500", "0.000", ""] in rows


def test_direct_debate_effect_compares_blind_means_with_final_scores() -> None:
    records = [
        cast(
            VerdictRecord,
            {
                "item_id": str(i),
                "group": f"d{i // 2}",
                "referees": [
                    {"agent": "R1", "opinions": [{"coherence": i % 3}], "scores": {"coherence": i % 3}},
                    {"agent": "R2", "opinions": [{"coherence": 1}], "scores": {"coherence": i % 3}},
                ],
                "scores": {"coherence": float(i % 3)},
                "human_scores": {"coherence": float(i % 4)},
                "parse_failures": 0,
            },
        )
        for i in range(8)
    ]
    effect = debate_effect("direct", records)
    assert effect is not None
    assert effect["items"] == 8
    assert effect["changed"] == sum(1 for i in range(8) if (i % 3 + 1) / 2 != i % 3)
    blind = [(i % 3 + 1) / 2 for i in range(8)]
    assert effect["blind_vs_final_spearman"]["coherence"] == pytest.approx(
        spearmanr(blind, [i % 3 for i in range(8)])[0]
    )
    found = effect["comparison"]
    assert found["resampled"] == "4 groups"
    human = [i % 4 for i in range(8)]
    assert found["average"]["spearman"]["blind"] == pytest.approx(spearmanr(human, blind)[0])
