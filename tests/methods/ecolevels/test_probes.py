"""Spec §7: the WinoBias scorer and the probes' bias indices on reference models."""

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
    assert abs(flat.effect) < 0.5 and flat.ci_low <= 0 <= flat.ci_high or flat.effect == 0.0


def test_weat_effect_size_on_planted_embeddings():
    rng = np.random.default_rng(0)
    career, family = rng.normal(size=16), rng.normal(size=16)
    vec = {w: career + 0.3 * rng.normal(size=16) for w in ("c1", "c2", "m1", "m2")}
    vec |= {w: family + 0.3 * rng.normal(size=16) for w in ("f1", "f2", "w1", "w2")}
    d, units = weat_effect(vec.__getitem__, ["m1", "m2"], ["w1", "w2"], ["c1", "c2"], ["f1", "f2"])
    assert d > 1.5 and np.mean(units) == pytest.approx(d / 2)
    d_rev, _ = weat_effect(vec.__getitem__, ["w1", "w2"], ["m1", "m2"], ["c1", "c2"], ["f1", "f2"])
    assert d_rev == pytest.approx(-d)
