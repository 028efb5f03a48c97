"""Spec §7 integration: the LangGraph simulator with scripted agents, the one-use rule and summarisation."""

import pytest

from agents.medcog.graph import run_episode
from methods.llm_eval.tokens import words_counter
from methods.medcog.baselines import high_baselines
from methods.medcog.cases import make_case
from methods.medcog.highlevel import score_episode


def _run(case, model, budget=4096, max_turns=30):
    return run_episode(
        case, model=model, seed=0, count=words_counter, budget=budget, max_turns=max_turns, temperature=0.0
    )


def test_full_work_up_scores_strict_one_and_rushing_scores_zero(data_dir):
    case = make_case("Sepsis", 0)  # has labs, micro and imaging
    with high_baselines([case]) as m:
        full = score_episode(case, _run(case, m["oracle"]))
        rush = score_episode(case, _run(case, m["output at once"]))
    assert full.correct and full.strict == pytest.approx(1.0)
    assert full.actions == ["PE", "LAB", "MICRO", "IMAGE"]  # forced to output once every exam is used
    assert rush.correct and rush.strict == 0.0 and rush.recalls == {"lab": 0.0, "micro": 0.0, "imaging": 0.0}


def test_each_exam_is_offered_once_and_bad_formats_are_warned(data_dir, scripted_llm):
    case = make_case("Pancreatitis", 1)
    replies = iter(["Action: PE", "Action: PE", "nonsense", "Action: OUTPUT", "Diagnosis: pancreatitis"])
    provider = scripted_llm("sim-once", lambda m: next(replies))
    final = _run(case, "scripted/sim-once")
    users = [c[-1]["content"] for c in provider.calls["sim-once"]]
    assert "Choose your next action from [LAB, IMAGE, MICRO, OUTPUT]" in users[1]  # PE removed
    assert "not available" in users[2] and "not available" in users[3]
    assert final["warnings"] == 2 and final["diagnosis"] == "pancreatitis"
    assert score_episode(case, final).strict == 0.0  # correct, but no exam ordered


def test_over_budget_dialogue_is_summarised_and_turns_are_capped(data_dir, scripted_llm):
    case = make_case("Hypothyroidism", 0)
    provider = scripted_llm(
        "sim-chatty",
        lambda m: "Summary: tired patient" if "Summarise" in m[-1]["content"] else "Rationale: " + "word " * 60,
    )
    final = _run(case, "scripted/sim-chatty", budget=600, max_turns=6)
    assert final["summaries"] >= 1 and final["turn"] == 6 and not final.get("done")
    assert any("Summary of the consultation so far: tired patient" in m["content"] for m in final["messages"])
    assert len(provider.calls["sim-chatty"]) >= 7


def test_a_rerun_replays_stored_episodes_without_calling_the_model(data_dir, scripted_llm):
    from agents.medcog.simulate import HighParams, run_high
    from methods.medcog.cases import make_case as mk

    case = mk("Sepsis", 0)
    with high_baselines([case]) as m:
        p = HighParams(model=m["oracle"], diseases=["Sepsis"], seeds=[7], temperature=0.0)
        first, _, run_a = run_high(p, count=words_counter)
        from core.llm.providers import SCRIPTED

        n_calls = len(SCRIPTED.calls["medcog-hi-oracle"])
        again, eps, run_b = run_high(p, count=words_counter)
        assert len(SCRIPTED.calls["medcog-hi-oracle"]) == n_calls and run_a == run_b
    assert first.macro_strict == again.macro_strict == pytest.approx(1.0)
    assert eps[7][0].actions == ["PE", "LAB", "MICRO", "IMAGE"] and eps[7][0].turns == 8
