"""Spec §7: the WinoBias scorer and the probes' bias indices on reference models."""

import time

import numpy as np
import pytest

from methods.ecolevels.baselines import probe_baselines
from methods.ecolevels.experiment import run_probe
from methods.ecolevels.probes import load_winobias, score_winobias, weat_effect


def test_winobias_stereotyped_resolver_scores_100_pro_0_anti(data_dir):
    pairs = load_winobias()
    assert len(pairs) > 700
    s = score_winobias(pairs, [(p.stereotyped, a.stereotyped) for p, a in pairs])
    assert s == {"pro_acc": 1.0, "anti_acc": 0.0, "delta": 1.0}
    s = score_winobias(pairs, [(p.referent, a.referent) for p, a in pairs])
    assert s["delta"] == 0.0 and s["pro_acc"] == 1.0


@pytest.mark.parametrize("probe", ["winobias", "llm_iat", "explicit_agree", "resume_screening"])
def test_generation_probes_bound_by_the_references(data_dir, probe):
    with probe_baselines() as m:
        top = run_probe(probe, model=m["stereotyped (reference)"], paraphrases=2, seeds=[0, 1], n_units=4)
        flat = run_probe(probe, model=m["constant A/3/yes (reference)"], paraphrases=1, seeds=[0], n_units=8)
    assert top.effect == pytest.approx(1.0) and top.verdict == "bias" and len(top.runs) == 4
    # the constant answerer: WinoBias ("A" picks the same slot for the pro and the anti sentence of a pair), the
    # balanced Likert items ("3") and the résumés ("yes" for both names) are exactly 0; the IAT's "A" follows the
    # random name order, so only its interval has to hold 0
    if probe == "llm_iat":
        assert flat.ci_low <= 0 <= flat.ci_high and flat.verdict == "null"
    else:
        assert flat.effect == 0.0 and (flat.ci_low, flat.ci_high) == (0.0, 0.0) and flat.verdict == "null"
    # units shown under both paraphrases and both seeds count once: the interval is over distinct stimuli
    assert top.n_units == len(set(top.units["keys"])) == len(top.units["values"])
    assert top.n_units < sum(len(r) for r in [[0] * 4] * 4)  # fewer than the 16 pooled unit values


@pytest.mark.parametrize(("answer", "acquiescence"), [("1", -1.0), ("5", 1.0), ("3", 0.0)])
def test_explicit_probe_reads_a_constant_likert_answer_as_acquiescence_not_bias(scripted_llm, answer, acquiescence):
    """Issue #49: without reverse-keyed statements a model answering "1" to everything read as reverse bias (−1)."""
    name = f"eco-likert-{answer}-{time.monotonic_ns()}"  # stored generations are reused per model name
    scripted_llm(name, lambda messages: answer)
    r = run_probe("explicit_agree", model=f"scripted/{name}", paraphrases=2, seeds=[0, 1, 2], n_units=7)
    assert r.effect == 0.0 and r.verdict == "null"
    # every distinct unit (a topic: its consistent and its reverse-keyed statement) is exactly 0, whichever topics
    # the seeds drew, so the interval is [0, 0] and not the spread of unbalanced ±1 statements
    assert set(r.units["values"]) == {0.0} and (r.ci_low, r.ci_high) == (0.0, 0.0)
    assert {x["acquiescence"] for x in r.runs} == {acquiescence}
    assert all(x["mean_rating_consistent"] == x["mean_rating_reverse"] == int(answer) for x in r.runs)


def test_explicit_probe_asks_each_topic_both_ways():
    from methods.ecolevels.probes import plan_explicit
    from methods.ecolevels.wordlists import REVERSE_STATEMENTS, STATEMENTS

    plan = plan_explicit("scripted/x", 0, 3, 8)
    texts = [r.prompt for r in plan.requests]
    keyed = {k: [t for t, kk in zip(texts, plan.keys, strict=True) if kk == k] for k in set(plan.keys)}
    assert len(keyed) == 4  # 8 statements = 4 topics, each asked as its consistent and its reverse-keyed statement
    for k, both in keyed.items():
        i = int(k[5:7])
        assert (
            len(both) == 2 and any(STATEMENTS[i] in t for t in both) and any(REVERSE_STATEMENTS[i] in t for t in both)
        )
    odd = plan_explicit("scripted/x", 0, 3, 3)  # an odd n rounds up: a constant answer must still read 0
    assert len(odd.keys) == 4 and len(set(odd.keys)) == 2
    # agreeing with the stereotype (5) and rejecting its reverse (1) is +1 on every unit
    outs = {r.key: ("5" if any(st in r.prompt for st in STATEMENTS) else "1") for r in plan.requests}
    units, details = plan.score(outs)
    assert units == [1.0] * 8 and details["acquiescence"] == 0.0


def test_distinct_units_average_a_stimulus_over_its_measurements():
    from methods.ecolevels.probes import UnitRun, distinct_units

    runs = [UnitRun(0, 0, [1.0, 0.0], keys=["a", "b"]), UnitRun(1, 0, [0.0, 0.0], keys=["a", "b"])]
    runs.append(UnitRun(0, 1, [1.0], keys=["c"]))
    assert distinct_units(runs) == (["a", "b", "c"], [0.5, 0.0, 1.0])


def test_weat_units_are_the_names_once_not_once_per_seed(data_dir):
    from methods.ecolevels.wordlists import FEMALE_NAMES, MALE_NAMES

    r = run_probe("weat_embeddings", model="local/smollm2-135m-instruct", paraphrases=2, seeds=[0, 1, 2])
    assert len(r.runs) == 2  # one measurement per paraphrase: the seeds do not change embeddings
    assert r.n_units == len(MALE_NAMES) + len(FEMALE_NAMES) == len(r.units["keys"])
    assert r.effect == pytest.approx(sum(x["weat_d"] for x in r.runs) / 4)  # the mean of d/2 over paraphrases


def test_weat_effect_size_on_planted_embeddings():
    rng = np.random.default_rng(0)
    career, family = rng.normal(size=16), rng.normal(size=16)
    vec = {w: career + 0.3 * rng.normal(size=16) for w in ("c1", "c2", "m1", "m2")}
    vec |= {w: family + 0.3 * rng.normal(size=16) for w in ("f1", "f2", "w1", "w2")}
    d, units = weat_effect(vec.__getitem__, ["m1", "m2"], ["w1", "w2"], ["c1", "c2"], ["f1", "f2"])
    assert d > 1.5 and np.mean(units) == pytest.approx(d / 2)
    d_rev, _ = weat_effect(vec.__getitem__, ["w1", "w2"], ["m1", "m2"], ["c1", "c2"], ["f1", "f2"])
    assert d_rev == pytest.approx(-d)
