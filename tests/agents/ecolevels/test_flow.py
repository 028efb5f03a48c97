"""Spec §7 integration: the flow end to end — four probes (one per level) on SmolLM2-135M give a report
with all four cells, CIs and a generalisation prediction per probe–target pair."""

import pytest

from agents.ecolevels.config import FlowConfig
from agents.ecolevels.graph import run_flow
from methods.ecolevels.validity import RESUME_SCREENER

FOUR = ["weat_embeddings", "winobias", "explicit_agree", "resume_screening"]


def test_four_levels_on_the_local_model(data_dir):
    out = run_flow(FlowConfig(model="local/smollm2-135m-instruct", paraphrases=1, seeds=[0], n_units=2, probes=FOUR))
    data = out["report"]["data"]
    levels = {r["level"] for r in data["results"]}
    assert levels == {"L1", "L2", "L3", "L4"}
    for r in data["results"]:
        assert r["ci_low"] <= r["effect"] <= r["ci_high"] and r["ev"] is not None
    assert {p["probe"] for p in data["predictions"]} == set(FOUR)
    assert all(c["label"] in {"R1", "R2", "R3", "R4"} for c in data["conflicts"])


def test_selection_for_a_behavioural_claim_and_jobs_fan_out(data_dir):
    from core.jobs import load_all
    from core.jobs.dispatch import register_sender
    from methods.ecolevels.baselines import probe_baselines

    load_all()
    previous = register_sender(lambda job: None)
    try:
        with probe_baselines() as m:
            config = FlowConfig(
                model=m["stereotyped (reference)"],
                paraphrases=1,
                seeds=[0],
                n_units=2,
                mode="jobs",
                probes=["winobias", "resume_screening"],
            )
            out = run_flow(config, steal_after_s=0.0)
    finally:
        register_sender(previous)
    assert [r["effect"] for r in out["report"]["data"]["results"]] == pytest.approx([1.0, 1.0])
    from methods.ecolevels.registry import load_probes
    from methods.ecolevels.select import select_probes

    sel = select_probes(load_probes(from_db=False), RESUME_SCREENER)
    assert sel[0].probe_id == "resume_screening" and sel[0].role == "evidence"
    assert {s.level for s in sel if s.role == "diagnostic"} == {"L1", "L2", "L3"}
