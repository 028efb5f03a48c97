"""Spec §7 integration checks of the graph: DAG, prompts with parents verbatim, oracle run, checkpoints."""

from __future__ import annotations

import pytest

from agents.clinical_got.config import ClinicalGotConfig
from agents.clinical_got.experiment import run_case, scored_row
from agents.clinical_got.graph import build_graph, direct_graph, graph
from methods.clinical_got.bench import prepare_case
from methods.clinical_got.config import BenchConfig
from methods.clinical_got.evaluate import bayes_accuracy, task_metrics

BENCH = BenchConfig(n_cases=5, seed=0)
NODES = ["n1", "n2", "n2_5", "n3", "n4", "n5"]


def _edges(g) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in g.get_graph().edges}


def test_cgot_dag_is_the_papers():
    edges = _edges(graph)
    for e in [("n1", "n3"), ("n2", "n3"), ("n1", "n4"), ("n2", "n4"), ("n3", "n4"), ("n2", "n2_5")]:
        assert e in edges, e
    for e in [("n1", "n5"), ("n2", "n5"), ("n2_5", "n5"), ("n3", "n5")]:
        assert e in edges, e
    assert ("__start__", "n3") not in edges and ("__start__", "n4") not in edges
    direct = _edges(direct_graph)
    assert {("__start__", n) for n in ("n1", "n2", "n3", "n4")} <= direct
    assert not {("n1", "n4"), ("n3", "n4"), ("n1", "n3")} & direct


def test_full_graph_on_five_cases(cgot_model):
    cfg = ClinicalGotConfig(model=cgot_model, bench=BENCH)
    for case_id in BENCH.case_ids():
        state = run_case(case_id, cfg, checkpoint=False)
        assert [n for n in NODES if state.get(n)] == NODES  # six answers per case
        n4 = state["n4"]["prompt"]
        for parent in ("n1", "n2", "n3"):
            assert f"was: {state[parent]['answer']}" in n4  # verbatim
        assert "Knowledge (MRI injury score, quantitative)" in n4 and "62 regions" not in n4
        assert state["n2_5"]["parsed"] == {"any": True, "rois": [71]}  # vermis is not a primary region
        assert state["n5"]["answer"].startswith(f"The {case_id} MRI shows 2.00% of the brain volume injured.")
        assert "Visual findings read from the images" in state["n1"]["prompt"]
        direct = run_case(case_id, cfg, mode="direct", checkpoint=False)
        assert "previous answer" not in direct["n4"]["prompt"] and "Knowledge" not in direct["n1"]["prompt"]
        assert direct["n2"]["prompt"] == state["n2"]["prompt"]  # only knowledge and parents differ


def test_oracle_run_scores_tasks_one_to_three_perfectly_and_outcome_at_the_bayes_ceiling():
    bench = BenchConfig(n_cases=8, seed=1)
    cfg = ClinicalGotConfig(model="oracle", bench=bench, oracle_nodes=["n1", "n2", "n3", "n4"])
    rows = []
    for c in bench.case_ids():
        rows.append(scored_row(run_case(c, cfg, checkpoint=False), prepare_case(bench, c).truth))
    m = task_metrics(rows)
    assert m["task1"]["accuracy"] == 1.0 and m["task1"]["mae_pct"] < 0.005
    assert m["task2"]["f1"] == 1.0 and m["task2_5"]["f1"] == 1.0 and m["task2_5"]["yes_no_accuracy"] == 1.0
    assert m["task3"]["accuracy"] == 1.0
    assert m["task4"]["accuracy"] == pytest.approx(bayes_accuracy(rows))
    assert m["task5"]["rougeL_f"] > 0.97  # the percentage is rounded to 4 decimals in N1's format


def test_checkpointed_run_is_stored_and_not_repeated(cgot_model):
    from core.llm.providers import SCRIPTED

    name = cgot_model.split("/", 1)[1]
    cfg = ClinicalGotConfig(model=cgot_model, bench=BENCH)
    first = run_case("case001", cfg, salt="resume-test")
    calls = len(SCRIPTED.calls[name])
    assert calls == 4  # N1, N2, N3, N4
    again = run_case("case001", cfg, salt="resume-test")
    assert len(SCRIPTED.calls[name]) == calls and again["n4"] == first["n4"]


def test_graph_builds_with_a_checkpointer(tmp_path):
    from core.checkpoint import checkpointer

    with checkpointer("clinical_got", path=tmp_path / "c.sqlite") as saver:
        assert build_graph("direct", checkpointer=saver).checkpointer is saver


def test_vision_models_get_the_slice_triples_and_text_models_the_findings():
    from agents.clinical_got.nodes import build_prompt, use_images

    case = prepare_case(BENCH, "case000")
    images = ClinicalGotConfig(model="scripted/x", bench=BENCH, visual="images")
    n1 = build_prompt("n1", {"case_id": "case000"}, case, images, chained=True)
    n2 = build_prompt("n2", {"case_id": "case000"}, case, images, chained=True)
    assert sum(isinstance(p, dict) for p in n1) == 20 and sum(isinstance(p, dict) for p in n2) == 30
    assert "ZMAP Slice 7" in n1 and "ROI Slice 16" in n2 and not any("Visual findings" in str(p) for p in n2)
    assert use_images(ClinicalGotConfig(), "openai/gpt-4o") == (False, True)
    assert use_images(ClinicalGotConfig(), "local/smollm2-135m-instruct") == (True, False)
    assert use_images(ClinicalGotConfig(visual="both"), "local/smollm2-135m-instruct") == (True, True)
