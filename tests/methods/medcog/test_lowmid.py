"""Spec §7 integration: the oracle scores normalised 1.0 on every low/mid task, a constant answerer ≈ 0."""

import pytest

from methods.llm_eval.tokens import words_counter
from methods.medcog.baselines import lowmid_baselines
from methods.medcog.data import load_task, select_items
from methods.medcog.lowmid import LowMidParams, run_lowmid


@pytest.fixture(scope="module")
def results():
    tasks = ["MCQ", "SV", "AE", "MR"]
    out = {}
    with lowmid_baselines(["medqa"], tasks) as models:
        for label, model in models.items():
            p = LowMidParams(model=model, datasets=["medqa"], tasks=tasks, n_items=12, repeats=2)
            out[label] = run_lowmid(p, count=words_counter)
    return out


def test_oracle_is_perfect_on_every_task(data_dir, results):
    for s in results["oracle"].scores:
        assert s.norm == pytest.approx(1.0), s.task
    assert results["oracle"].levels["medqa/low"]["norm"] == pytest.approx(1.0)
    assert results["oracle"].levels["medqa/mid"]["norm"] == pytest.approx(1.0)
    assert results["oracle"].n_errors == 0


def test_constant_answerer_sits_at_chance(data_dir, results):
    by_task = {s.task: s for s in results["constant"].scores}
    assert by_task["SV"].norm == pytest.approx(0.0) and by_task["AE"].norm == pytest.approx(0.0)
    assert by_task["MR"].norm == pytest.approx(0.0)  # 0.2 credit for "correct" = the chance level
    idxs = select_items("medqa", 12)
    gold = {it[0]: it[2] for it in load_task("medqa", "MCQ")}
    share_a = sum(gold[i] == "A" for i in idxs) / len(idxs)
    assert by_task["MCQ"].norm == pytest.approx((share_a - 0.2) / 0.8)
    assert abs(by_task["MCQ"].norm) <= 0.3


def test_raw_outputs_are_in_the_database(data_dir, results):
    from methods.llm_eval.harness import stored_outputs

    stored = stored_outputs(results["oracle"].run_id)
    assert len(stored) == 12 * (1 + 2 + 2 + 2) * 2
    assert stored["medqa/MR/" + str(select_items("medqa", 1)[0]) + "/v0/r0"].text == " correct"


def test_medmcqa_oracle_uses_its_labels_and_weights(data_dir):
    tasks = ["AE", "MR"]  # AE labels are "T"/"F" there, MR weights 0.25/0.75
    with lowmid_baselines(["medmcqa"], tasks) as models:
        p = LowMidParams(model=models["oracle"], datasets=["medmcqa"], tasks=tasks, n_items=3, repeats=2)
        res = run_lowmid(p, count=words_counter)
        c = LowMidParams(model=models["constant"], datasets=["medmcqa"], tasks=["MR"], n_items=3, repeats=2)
        const = run_lowmid(c, count=words_counter)
    assert [s.norm for s in res.scores] == pytest.approx([1.0, 1.0])
    (mr,) = const.scores
    assert mr.acc == pytest.approx(0.25) and mr.norm == pytest.approx(0.0)
