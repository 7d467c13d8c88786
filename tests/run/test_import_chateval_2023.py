"""chateval import of ChatEval's own 2023 outputs (configs/import/chateval_2023.yaml, on the
sample in their layout written for this project): every referee's reply read by the 2023 rule,
each item decided by the paper's, labelled by the data's human labels, so that the folder's
accuracy and kappa are the ones ChatEval's own scoring computes from the same files, checked
against that scoring re-implemented here. With FairEval's release at hand (../shared/datasets,
skipped without it), the same on its 80 real items with outputs the test writes. The folder's
items are a chateval run's of the same data: `chateval compare` sets the two side by side."""

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import DataError
from chateval.run.finished import load_finished_run
from chateval.run.import_any import import_any
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, assert_same_statistics, read_jsonl, tiny_config
from tests.support.import_configs import recipe_tree, write_import_config
from tests.support.scripted import soft_checksum_referee

RECIPE = CONFIGS_DIR / "import" / "chateval_2023.yaml"
SAMPLE = CONFIGS_DIR / "samples" / "chateval_2023"
PANEL = SAMPLE / "two_turns_sequential" / "two_different_role"
ORIGINAL = PANEL / "calc_score_comparison" / "sample_model" / "pair_comparison_results.json"
REVERSE = PANEL / "calc_score_comparison_reverse" / "sample_model" / "pair_comparison_results.json"
REVIEW = "review/review_gpt35_vicuna-13b_human.txt"
DATASETS = CONFIGS_DIR.parent.parent / "shared" / "datasets"
FAIREVAL = DATASETS / "faireval"
# The same 80 items as ChatEval's test.json holds them (question_id from 0), which its 2023 code read.
TEST_JSON = DATASETS / "chateval_faireval" / "preprocessed_data" / "test.json"
runner = CliRunner()


def chateval_2023_scores(original: list[dict[str, Any]], reverse: list[dict[str, Any]]) -> list[str]:
    """ChatEval's 2023 scoring of FairEval outputs (thunlp/ChatEval, the calc_*_calibration.py
    scripts' get_accuracy_calibration, method "average" as the FairEval configs ran it): per
    item, each role's two score lines parsed with float(), Assistant 1's score of the original
    order and Assistant 2's of the reversed one added to gpt35's, the others to vicuna's; the
    larger sum wins, equal sums tie, and any reply that does not parse makes the item a tie."""
    predictions = []
    for result, result_reverse in zip(original, reverse, strict=False):
        gpt35 = vicuna = 0.0
        try:
            for role, role_reverse in zip(result["evaluation"], result_reverse["evaluation"], strict=False):
                gpt35 += float(role["evaluation"].split("\n")[-2].split("The score of Assistant 1:")[-1])
                vicuna += float(role["evaluation"].split("\n")[-1].split("The score of Assistant 2:")[-1])
                vicuna += float(
                    role_reverse["evaluation"].split("\n")[-2].split("The score of Assistant 1:")[-1]
                )
                gpt35 += float(
                    role_reverse["evaluation"].split("\n")[-1].split("The score of Assistant 2:")[-1]
                )
            predictions.append("gpt35" if gpt35 > vicuna else "vicuna" if gpt35 < vicuna else "tie")
        except (ValueError, IndexError):
            predictions.append("tie")
    return predictions


def kappa_2023(predictions: list[str], targets: list[str]) -> float:
    """ChatEval's get_kappa: Cohen's kappa over the 3x3 confusion of gpt35 / vicuna / tie."""
    index = {"gpt35": 0, "vicuna": 1, "tie": 2}
    confusion = np.zeros((3, 3))
    for predicted, target in zip(predictions, targets, strict=True):
        confusion[index[predicted]][index[target]] += 1
    n = confusion.sum()
    po = np.trace(confusion) / n
    pe = sum(confusion[i, :].sum() * confusion[:, i].sum() for i in range(3)) / (n * n)
    return float((po - pe) / (1 - pe))


def human_targets(faireval: Path) -> list[str]:
    """FairEval's human labels as ChatEval's test.json names them (CHATGPT gpt35, VICUNA13B
    vicuna, TIE tie)."""
    names = {"CHATGPT": "gpt35", "VICUNA13B": "vicuna", "TIE": "tie"}
    return [names[line.strip()] for line in (faireval / REVIEW).read_text(encoding="utf-8").splitlines()]


def _agreement(folder: Path) -> tuple[float, float]:
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    panel = metrics["aggregations"]["hard"]["panel"]
    return panel["accuracy"]["value"], panel["kappa"]["value"]


def _load(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))


def _config(tmp_path: Path, original: Path, reverse: Path, data: dict[str, Any]) -> Path:
    tree = recipe_tree(RECIPE)
    tree["outputs"] |= {"path": str(original), "swapped_path": str(reverse)}
    tree["data"] = data
    return write_import_config(tmp_path, tree)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("chateval_2023") / "sample"
    import_any(RECIPE, out)
    return out


def test_accuracy_and_kappa_are_chatevals_own_on_the_sample(sample: Path) -> None:
    predictions = chateval_2023_scores(_load(ORIGINAL), _load(REVERSE))
    targets = human_targets(SAMPLE / "faireval")
    # By hand: item 3's and item 6's Critic replies do not parse ("8 out of 10"; a trailing
    # newline): ties, wrong; item 4 sums 30 to 29 for gpt35; item 5 ties 32 to 32.
    assert predictions == ["gpt35", "vicuna", "tie", "gpt35", "tie", "tie"]
    accuracy = sum(p == t for p, t in zip(predictions, targets, strict=True)) / len(targets)
    assert _agreement(sample) == pytest.approx((accuracy, kappa_2023(predictions, targets)))
    assert accuracy == pytest.approx(4 / 6)


def test_the_replies_become_a_panels_verdicts(sample: Path) -> None:
    records = {r["item_id"]: r for r in read_jsonl(sample / "verdicts.jsonl")}
    assert list(records) == ["1", "2", "3", "4", "5", "6"]
    # Item 2: a half point, both orders for vicuna (B); the swapped order showed B first.
    half = records["2"]
    assert [r["score_a"] for r in half["orders"][0]["referees"]] == [7, 7.5]
    assert [r["winner_shown"] for r in half["orders"][1]["referees"]] == ["1", "1"]
    assert (half["score_a"], half["score_b"], half["label"], half["human_label"]) == (28.5, 32, "B", "B")
    assert half["orders"][0]["referees"][0]["assessment"].startswith("Evaluation evidence: Assistant 2")
    # Item 3: the Critic's reversed reply does not parse: a tie by the 2023 rule, the Critic
    # left out of both orders and its text kept.
    failed = records["3"]
    assert (failed["label"], failed["excluded_referees"], failed["parse_failures"]) == ("tie", ["Critic"], 1)
    critic = failed["orders"][1]["referees"][1]
    assert (
        critic["raw"].endswith("The score of Assistant 2: 6 out of 10") and "8 out of 10" in critic["error"]
    )
    assert failed["referee_labels"] == {"General Public": "B"}
    assert (records["4"]["score_a"], records["4"]["score_b"], records["4"]["label"]) == (30, 29, "A")
    # The run folder says what it holds: the outputs' two files, the roles as referees on the
    # config's model, and a run config of the data with the 2023 verdict.
    info = json.loads((sample / "run.json").read_text(encoding="utf-8"))
    assert info["imported"]["path"] == str(ORIGINAL) and info["imported"]["swapped_path"] == str(REVERSE)
    assert {str(ORIGINAL), str(REVERSE)} <= set(info["inputs"])
    assert info["referees"] == {"General Public": "sample-model", "Critic": "sample-model"}
    assert (info["imported"]["labels"]["labelled"], info["verdict_parse_failures"]) == (6, 2)
    config = load_finished_run(sample).config
    assert (config.verdict.on_failure, config.verdict.half_points, config.calibrated) == ("tie", True, True)
    assert [agent.name for agent in config.agents] == ["General Public", "Critic"]


def test_rescore_reads_the_folder_to_the_same_metrics(sample: Path) -> None:
    metrics = json.loads((sample / "metrics.json").read_text(encoding="utf-8"))
    result = runner.invoke(app, ["rescore", str(sample)])
    assert result.exit_code == 0, result.output
    assert_same_statistics(json.loads((sample / "metrics.json").read_text(encoding="utf-8")), metrics)


def _write_outputs(tmp_path: Path, items: list[tuple[str, str, str]]) -> tuple[Path, Path]:
    """Outputs of a made-up two-role panel on ``items`` (question, gpt35's answer, vicuna's),
    in ChatEval's layout: each reply's scores drawn from a checksum of the item and the order;
    one reply in nine ends with a score the 2023 rule cannot read."""
    written = []
    for reverse in (False, True):
        records = []
        for question, gpt35, vicuna in items:
            evaluation = []
            for role in ("General Public", "Critic"):
                n = zlib.crc32(f"{role}|{reverse}|{question}".encode())
                first, second = n % 7 + 3, (n // 7) % 7 + 3
                tail = " points" if n % 9 == 0 else ""
                text = f"Evaluation evidence: checksum {n}.\n\nThe score of Assistant 1: {first}\n"
                evaluation.append(
                    {"role": role, "evaluation": text + f"The score of Assistant 2: {second}{tail}"}
                )
            records.append(
                {
                    "question": question,
                    "response": {"gpt35": gpt35, "vicuna": vicuna},
                    "evaluation": evaluation,
                }
            )
        path = tmp_path / ("reverse.json" if reverse else "original.json")
        path.write_text(json.dumps(records, indent=4), encoding="utf-8")
        written.append(path)
    return written[0], written[1]


@pytest.mark.skipif(not FAIREVAL.is_dir(), reason="FairEval's release is not in ../shared/datasets")
@pytest.mark.parametrize(
    ("data", "first_id"),
    [
        ({"format": "faireval", "path": str(FAIREVAL), "pair": ["gpt35", "vicuna-13b"]}, "1"),
        ({"format": "chateval_faireval", "path": str(TEST_JSON)}, "0"),
    ],
    ids=["faireval", "chateval_faireval"],
)
def test_on_fairevals_80_items_the_numbers_are_chatevals_own(
    tmp_path: Path, data: dict[str, Any], first_id: str
) -> None:
    if not Path(data["path"]).exists():
        pytest.skip(f"{data['path']} is not there")
    questions = [
        json.loads(line) for line in (FAIREVAL / "question.jsonl").read_text(encoding="utf-8").splitlines()
    ]

    def answers(model: str) -> dict[int, str]:
        lines = (FAIREVAL / "answer" / f"answer_{model}.jsonl").read_text(encoding="utf-8").splitlines()
        return {r["question_id"]: r["text"] for r in map(json.loads, lines)}

    gpt35, vicuna = answers("gpt35"), answers("vicuna-13b")
    items = [(q["text"], gpt35[q["question_id"]], vicuna[q["question_id"]]) for q in questions]
    original, reverse = _write_outputs(tmp_path, items)
    out = tmp_path / "faireval"
    import_any(_config(tmp_path, original, reverse, data), out)
    predictions = chateval_2023_scores(_load(original), _load(reverse))
    targets = human_targets(FAIREVAL)
    assert len(targets) == 80 and "tie" in predictions  # some replies did not parse
    accuracy = sum(p == t for p, t in zip(predictions, targets, strict=True)) / 80
    assert _agreement(out) == pytest.approx((accuracy, kappa_2023(predictions, targets)))
    assert read_jsonl(out / "verdicts.jsonl")[0]["item_id"] == first_id


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda r: r[1].update(question="Something else?"),
            "record 1: field 'question' is not item '2''s question",
        ),
        (
            lambda r: r[2]["response"].update(vicuna="edited"),
            "record 2: field 'response.vicuna' is not item '3''s answer B",
        ),
        (
            lambda r: r[0]["evaluation"].reverse(),
            "record 0: field 'evaluation' has the roles Critic, General Public",
        ),
        (lambda r: r.pop(), "the two answer orders' outputs judged different numbers of items"),
    ],
    ids=["other question", "other answer", "other roles", "fewer records"],
)
def test_outputs_that_are_not_the_datas_are_refused_and_nothing_is_written(
    tmp_path: Path, change: Any, says: str
) -> None:
    records = _load(REVERSE)
    change(records)
    reverse = tmp_path / "reverse.json"
    reverse.write_text(json.dumps(records), encoding="utf-8")
    data = {"format": "faireval", "path": str(SAMPLE / "faireval"), "pair": ["gpt35", "vicuna-13b"]}
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        import_any(_config(tmp_path, ORIGINAL, reverse, data), out)
    assert says in str(caught.value) and "\n" not in str(caught.value) and not out.exists()


def test_compare_sets_the_outputs_beside_a_chateval_panel_on_the_same_items(
    sample: Path, tmp_path: Path
) -> None:
    native = tmp_path / "native"
    data = {"format": "faireval", "path": str(SAMPLE / "faireval"), "pair": ["gpt35", "vicuna-13b"]}
    run(
        tiny_config(name="native", data=data, position_calibration=True),
        native,
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)},
    )
    result = runner.invoke(app, ["compare", str(native), str(sample), "-o", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    assert "| native | chateval_2023 | 6 | 6 |" in (tmp_path / "cmp" / "compare.md").read_text(
        encoding="utf-8"
    )
