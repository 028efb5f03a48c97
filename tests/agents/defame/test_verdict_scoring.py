"""The judge's option by likelihood, and by likelihood calibrated against content-free inputs."""

from __future__ import annotations

import math

import pytest

from agents.defame.config import DefameConfig, DefameContext
from agents.defame.experiment import check_claim
from agents.defame.labels import Label
from agents.defame.nodes import judge as judge_mod
from agents.defame.nodes.judge import baseline_verdict

from .test_graph import CLAIM, JUDGE_REF

# With the claim in the prompt the model leans to `refuted` less than it does on a content-free prompt,
# and much more to `supported`: plain likelihood says refuted, calibrated likelihood says supported.
WITH_CLAIM = {"supported": 0.30, "refuted": 0.60}
CONTENT_FREE = {"supported": 0.05, "refuted": 0.90}


class Scorer:
    def __init__(self):
        self.calls: list[tuple[bool, list[str]]] = []

    def __call__(self, messages, conts):
        prompt = str(messages[-1]["content"])
        has_claim = "Golden Gate" in prompt
        table = WITH_CLAIM if has_claim else CONTENT_FREE
        self.calls.append((has_claim, list(conts)))
        rest = (1.0 - sum(table.values())) / max(1, len(conts) - 2)
        return [math.log(table.get(c.strip("`"), rest)) for c in conts]


def run(model, store, claim=CLAIM, **kw):
    cfg = DefameConfig(model=model, corpus="defame-test", limit_per_search=2, **kw)
    return check_claim(claim, cfg, store=store, checkpointer=None)


NO_PLAN = {"plan": ["I do not know what to do."], "judge": [JUDGE_REF], "justify": ["j"]}


def test_likelihood_verdict_takes_the_most_likely_option_without_generating(stage_llm, corpus_store):
    scorer = Scorer()
    model, script = stage_llm(NO_PLAN, scorer)
    fc = run(model, corpus_store, verdict="likelihood")
    assert fc.label == Label.REFUTED
    assert "judge" not in script.order and script.order[-1] == "justify"  # scored, not generated
    assert [has for has, _ in scorer.calls] == [True]  # no content-free prompts without calibration
    assert {"`supported`", "`refuted`"} <= set(scorer.calls[0][1])  # each option in backticks, as asked
    judge_call = next(c for c in fc.state["calls"] if c["stage"] == "judge")
    assert judge_call["scored"] == "likelihood" and judge_call["probs"]["refuted"] == pytest.approx(0.6)
    assert "refuted 0.60" in fc.markdown  # the probabilities enter the record


def test_calibration_divides_out_the_prompts_own_preference(stage_llm, corpus_store):
    scorer = Scorer()
    model, script = stage_llm(NO_PLAN, scorer)
    fc = run(model, corpus_store, verdict="calibrated")
    assert fc.label == Label.SUPPORTED  # 0.30/0.05 beats 0.60/0.90
    assert [has for has, _ in scorer.calls] == [True, False, False, False]  # "N/A", "[MASK]", ""
    call = next(c for c in fc.state["calls"] if c["stage"] == "judge")
    assert call["calibrated"]["supported"] > 0.5 > call["calibrated"]["refuted"]
    assert sum(call["calibrated"].values()) == pytest.approx(1.0, abs=1e-3)
    # The content-free estimate depends only on the prompt, not the claim: a second claim reuses it.
    other = dict(CLAIM, text="The Golden Gate Bridge is painted blue.")
    run(model, corpus_store, claim=other, verdict="calibrated")
    assert [has for has, _ in scorer.calls] == [True, False, False, False, True]


def test_the_no_evidence_baseline_is_scored_the_same_way(stage_llm):
    scorer = Scorer()
    model, script = stage_llm({"baseline": ["`refuted`"]}, scorer)
    ctx = DefameContext(config=DefameConfig(model=model, verdict="calibrated"))
    label, answer, calls = baseline_verdict(CLAIM, ctx)
    assert label == Label.SUPPORTED and answer.startswith("`supported`") and script.order == []
    assert calls[0]["stage"] == "baseline" and "calibrated" in calls[0]
    plain = DefameContext(config=DefameConfig(model=model))
    assert baseline_verdict(CLAIM, plain)[0] == Label.REFUTED and script.order == ["baseline"]


def test_a_model_that_cannot_score_falls_back_to_generation(stage_llm, corpus_store, monkeypatch):
    from core.llm import ScoringUnsupported

    def refuse(*a, **k):
        raise ScoringUnsupported("hosted model")

    monkeypatch.setattr(judge_mod, "_option_probs", refuse)
    model, script = stage_llm(NO_PLAN)
    fc = run(model, corpus_store, verdict="calibrated")
    assert fc.label == Label.REFUTED and "judge" in script.order


def test_calibrated_baseline_with_the_local_model():
    """The real 135M model: probabilities over the options, calibrated ones renormalised."""
    from agents.defame.labels import get_benchmark

    ctx = DefameContext(config=DefameConfig(model="local/smollm2-135m-instruct", verdict="calibrated"))
    label, answer, calls = baseline_verdict(CLAIM, ctx)
    allowed = get_benchmark("default").allowed_labels(is_final=True)
    assert label in allowed and answer.startswith(f"`{label.value}`")
    probs, cal = calls[0]["probs"], calls[0]["calibrated"]
    assert set(probs) == set(cal) == {lbl.value for lbl in allowed}
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-3) and sum(cal.values()) == pytest.approx(1.0, abs=1e-3)
    assert max(cal, key=cal.get) == label.value


def test_parallel_checks_share_one_content_free_estimate(stage_llm):
    """Claims judged at the same time (``workers`` > 1) wait for one content-free estimate."""
    import threading
    import time

    inner = Scorer()

    def slow(messages, conts):
        time.sleep(0.05)
        return inner(messages, conts)

    model, _ = stage_llm({"baseline": ["`refuted`"]}, slow)
    ctx = DefameContext(config=DefameConfig(model=model, verdict="calibrated"))
    out: list = []
    threads = [threading.Thread(target=lambda: out.append(baseline_verdict(CLAIM, ctx)[0])) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert out == [Label.SUPPORTED] * 3
    assert sorted(has for has, _ in inner.calls) == [False] * 3 + [True] * 3
