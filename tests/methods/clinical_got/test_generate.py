"""Spec §7 integration checks of the synthetic generator, the renders and the findings adapter."""

from __future__ import annotations

import numpy as np

from methods.clinical_got.atlas import build_atlas, roi_sizes
from methods.clinical_got.bench import prepare_case, qa_items
from methods.clinical_got.config import BenchConfig
from methods.clinical_got.findings import read_slice
from methods.clinical_got.generate import derive_truth, make_case
from methods.clinical_got.render import middle_third

CFG = BenchConfig(n_cases=12, seed=3)


def test_atlas_has_every_one_of_the_62_rois():
    sizes = roi_sizes(build_atlas())
    assert len(sizes) == 62 and min(sizes.values()) > 0


def test_generator_is_deterministic_and_rules_match_its_labels():
    for i in range(6):
        a, b = make_case(CFG, i), make_case(CFG, i)
        assert np.array_equal(a.adc, b.adc) and np.array_equal(a.zadc, b.zadc) and a.truth == b.truth
        # the same case whatever the benchmark size
        assert np.array_equal(a.adc, make_case(CFG.model_copy(update={"n_cases": 40}), i).adc)
        again = derive_truth(a.case_id, a.adc.copy(), a.zadc.copy(), a.atlas, CFG)
        assert {k: again[k] for k in again} == {k: a.truth[k] for k in again}
    assert not np.array_equal(make_case(CFG, 0).adc, make_case(CFG.model_copy(update={"seed": 4}), 0).adc)


def test_generator_covers_the_patterns_and_grades():
    cases = [make_case(BenchConfig(n_cases=60), i) for i in range(60)]
    assert {c.pattern for c in cases} == {"none", "watershed", "bgt", "near_total"}
    assert {c.truth["grade"] for c in cases} == {1, 2, 3, 4}
    assert {c.truth["score"] for c in cases} >= {0, 2, 3}
    lesion_free = [c for c in cases if c.pattern == "none"]
    assert lesion_free and all(c.truth["lesion_p"] == 0 and c.truth["injured"] == [] for c in lesion_free)
    adverse = np.mean([c.truth["outcome"] for c in cases])
    assert 0.2 < adverse < 0.55


def test_render_and_findings_read_back_the_lesion():
    case = make_case(CFG, 0)
    prepared = prepare_case(CFG, case.case_id)
    assert [t["slice"] for t in prepared.triples] == middle_third(24) == list(range(7, 17))
    blue = 0
    for t in prepared.triples:
        r = read_slice(t)
        k = t["slice"]
        lesion = (case.zadc[:, :, k] < -2) & (case.adc[:, :, k] > 0)
        assert r["blue"] == 9 * int(lesion.sum())  # 3× nearest-neighbour upscaling
        assert r["brain"] == 9 * int((case.adc[:, :, k] > 0).sum())
        blue += r["blue"]
    assert ("No blue pixels" in prepared.findings) == (blue == 0)
    assert len(qa_items(case.case_id, case.truth)) == 6
