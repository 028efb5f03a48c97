"""Spec §7: the strict high-level score, diagnosis matching and exam mapping."""

import pytest

from methods.medcog.cases import make_case
from methods.medcog.exams import diagnosis_correct, imaging_hits, match_tests, parse_imaging, strict_score
from methods.medcog.highlevel import score_episode


def test_strict_score():
    assert strict_score(True, {"lab": 1.0, "imaging": 0.5, "micro": None}) == pytest.approx(0.75)
    assert strict_score(False, {"lab": 1.0, "imaging": 0.5, "micro": None}) == 0.0
    assert strict_score(True, {"lab": None, "imaging": None, "micro": None}) == 1.0


def test_diagnosis_matching_uses_synonyms_as_whole_words():
    assert diagnosis_correct("heart failure", "acute decompensated CHF")
    assert diagnosis_correct("cholecystitis", "inflammation of the gallbladder")
    assert diagnosis_correct("Subarachnoid hemorrhage", "SAH from an aneurysm")
    assert not diagnosis_correct("atrial fibrillation", "LAFB")  # 'AF' only as a whole word
    assert not diagnosis_correct("Pancreatitis", "gastritis")


def test_exam_mapping_and_recalls(data_dir):
    case = make_case("Pancreatitis", 0)
    ids = {i for v in match_tests(["lipase", "CBC"]).values() for i in v} & set(case.labs)
    assert 50956 in ids and 51301 in ids
    hits = imaging_hits(list(case.radiology), parse_imaging("CT of the abdomen"))
    assert hits == ["CT ABD & PELVIS WITH CONTRAST"]
    ep = score_episode(
        case,
        {
            "diagnosis": "acute pancreatitis",
            "requested_labs": sorted(case.labs),
            "requested_imaging": hits,
            "done": True,
        },
    )
    assert ep.correct and ep.recalls["micro"] is None and ep.strict == pytest.approx(1.0)
