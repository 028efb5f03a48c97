"""High-level exam mapping and metric (spec §3.4): what a requested test returns, and the strict score.

* Lab requests are matched to the patient's lab item ids through the MIMIC-IV panel map
  (``meta_lab_tests_UMLS_ext.json``: panel or test name → item ids) by fuzzy name match
  (ratio > 90, an exact match or a plural, or the panel name as a whole word inside the request).
* Microbiology requests use the same map (culture names → ids).
* Imaging requests are parsed into regions and modalities; an available exam (its regions and
  modalities from ``radiology_name_dict.json``) is returned when both overlap.
* A case is correct when the disease name (substring) or one of its synonyms (word-boundary match;
  a tuple means every word must appear) is in the extracted ``Diagnosis:``; strict credit =
  correctness × the mean recall over lab / micro / imaging the patient actually had.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path

from methods.medcog.data import data_root

# Synonyms used by the correctness check (our lists; a tuple = all words must appear).
SYNONYMS: dict[str, list[str | tuple[str, ...]]] = {
    "Pancreatitis": [],
    "heart failure": ["CHF", "HFrEF", "HFpEF", "cardiac failure"],
    "atrial fibrillation": ["AF", "afib", "a-fib", "A. fib"],
    "cholecystitis": [("gallbladder", "inflammation")],
    "appendicitis": [],
    "Sepsis": ["septic shock", "septicemia"],
    "type 2 diabetes mellitus": ["T2DM", "type 2 diabetes", "NIDDM", "non-insulin-dependent diabetes"],
    "Hepatitis C": ["HCV", "hep C", "hepatitis C"],
    "Hypothyroidism": ["hypothyroid", "Hashimoto"],
    "Subarachnoid hemorrhage": ["SAH", "subarachnoid haemorrhage", "sub-arachnoid hemorrhage"],
}

REGION_ALIASES = {
    "Head": ["head", "brain", "cranial", "skull"],
    "Neck": ["neck", "thyroid", "carotid"],
    "Chest": ["chest", "lung", "thorax", "thoracic", "cxr", "heart", "cardiac", "echo"],
    "Abdomen": ["abdomen", "abdominal", "abd", "pelvis", "liver", "gallbladder", "pancrea", "ruq", "appendix"],
    "Spine": ["spine", "spinal", "lumbar", "cervical"],
    "Venous": ["venous", "vein", "dvt"],
}
MODALITY_ALIASES = {
    "CT": [r"\bct\b", "computed tomography", r"\bcta\b", "cat scan"],
    "MRI": [r"\bmri\b", "magnetic resonance", r"\bmr\b"],
    "Ultrasound": ["ultrasound", r"\bus\b", "sonograph", r"\bu\.s\.", "echo", "doppler", "duplex"],
    "Radiograph": ["x-ray", "xray", "radiograph", r"\bcxr\b", "film", "plain"],
    "MRA": [r"\bmra\b"],
    "MRCP": [r"\bmrcp\b"],
}


@functools.lru_cache(maxsize=2)
def _meta(root: str) -> tuple[dict[str, list[int]], dict[str, dict], dict[str, str]]:
    base = Path(root) / "mimic_iv_meta"
    labs = json.loads((base / "meta_lab_tests_UMLS_ext.json").read_text())
    radiology = json.loads((base / "radiology_name_dict.json").read_text())
    icd = json.loads((base / "new_disease_to_icd_names.json").read_text())
    return labs, radiology, icd


def meta(data_dir=None) -> tuple[dict[str, list[int]], dict[str, dict], dict[str, list[str]]]:
    """(lab/micro name → item ids, exam name → {modalities, regions}, disease → ICD titles)."""
    return _meta(str(data_root(data_dir)))


@functools.lru_cache(maxsize=4096)
def _fuzzy(item: str, root: str) -> str | None:
    labs = _meta(root)[0]
    low = item.lower().strip()
    if not low:
        return None
    best, best_score = None, 0.0
    for name in labs:
        n = name.lower()
        if n == low or (low.endswith("s") and low[:-1] == n):
            return name
        score = difflib.SequenceMatcher(None, low, n).ratio() * 100
        if score > 90 or (len(n) > 2 and re.search(rf"\b{re.escape(n)}\b", low)):
            if score > best_score:
                best, best_score = name, score
    return best


def match_tests(requested: Iterable[str], data_dir=None) -> dict[str, list[int]]:
    """Requested test names → item ids of the panel/test each matched (unmatched names are left out)."""
    root = str(data_root(data_dir))
    labs = _meta(root)[0]
    out = {}
    for name in requested:
        hit = _fuzzy(name.strip(), root)
        if hit is not None:
            out[name.strip()] = list(labs[hit])
    return out


def parse_imaging(request: str) -> list[tuple[set[str], set[str]]]:
    """Each comma-separated request → (regions, modalities) mentioned in it."""
    out = []
    for part in re.split(r"[,;\n]", request):
        low = part.lower()
        regions = {r for r, words in REGION_ALIASES.items() if any(w in low for w in words)}
        modalities = {m for m, pats in MODALITY_ALIASES.items() if any(re.search(p, low) for p in pats)}
        if regions and modalities:
            out.append((regions, modalities))
    return out


def exam_profile(exam_name: str, data_dir=None) -> tuple[set[str], set[str]]:
    radiology = meta(data_dir)[1]
    spec = radiology.get(exam_name, {"regions": [], "modalities": []})
    return set(spec["regions"]), set(spec["modalities"])


def imaging_hits(available: list[str], requests: list[tuple[set[str], set[str]]], data_dir=None) -> list[str]:
    """The available exams some request covers (region and modality both overlap)."""
    hits = []
    for exam in available:
        regions, modalities = exam_profile(exam, data_dir)
        if any(regions & rr and modalities & rm for rr, rm in requests):
            hits.append(exam)
    return hits


def extract_diagnosis(text: str) -> str:
    m = re.search(r"diagnosis:(.*?)(?:treatment:|treatment plan:|\Z)", text, re.IGNORECASE | re.DOTALL)
    return m.group(1).strip() if m else ""


def diagnosis_correct(disease: str, diagnosis: str) -> bool:
    """The disease name as a substring, else a synonym as whole words (every word of a tuple)."""
    if disease.lower() in diagnosis.lower():
        return True
    for syn in SYNONYMS.get(disease, []):
        words = syn if isinstance(syn, tuple) else (syn,)
        if all(re.search(r"\b" + re.escape(w) + r"\b", diagnosis, re.IGNORECASE) for w in words):
            return True
    return False


def recall(requested: set, available: set) -> float:
    return len(requested & available) / len(available)


def strict_score(correct: bool, recalls: dict[str, float | None]) -> float:
    """correctness × mean of the recalls of the exam types the patient had (``None`` = had none)."""
    have = [r for r in recalls.values() if r is not None]
    completeness = sum(have) / len(have) if have else 1.0
    return float(correct) * completeness
