"""The benchmark's ground-truth rules (spec §3.2 knowledge texts, §3.3, §5).

* lesion percentage = |Z-ADC < −2 ∧ ADC > 0| / |ADC > 0| (the N1 knowledge text);
* grades: level1 ≤ 1 %, level2 (1 %, 5 %], level3 (5 %, 50 %], level4 > 50 %;
* an ROI is injured when its lesion fraction ≥ ``roi_threshold`` (the reference's 0.225 atlas);
* uncommon ROIs = injured − :data:`~methods.clinical_got.atlas.PRIMARY` (N2.5);
* MRI injury score by the "math" rules (ground truth) and the "clinic" (NICHD-style) rules;
* the MRI interpretation caption (N5's template), built the same way for answers and ground truth.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from methods.clinical_got.atlas import ALIC, BGT, GM, PLIC, PRIMARY, WATERSHED, WM, roi_table

Z_LESION = -2.0
DEFAULT_ROI_THRESHOLD = 0.225


def grade(p: float) -> int:
    """Lesion grade 1–4 from the lesion fraction ``p`` (0–1): ≤ 0.01, (0.01, 0.05], (0.05, 0.5], > 0.5."""
    if p <= 0.01:
        return 1
    if p <= 0.05:
        return 2
    if p <= 0.5:
        return 3
    return 4


def lesion_mask(adc: np.ndarray, zadc: np.ndarray) -> np.ndarray:
    """Voxels with Z-ADC < −2 inside the brain (ADC > 0)."""
    return (zadc < Z_LESION) & (adc > 0)


def lesion_fraction(adc: np.ndarray, zadc: np.ndarray) -> float:
    """|Z-ADC < −2 ∧ ADC > 0| / |ADC > 0| (0 when the volume is empty)."""
    brain = int((adc > 0).sum())
    return float(lesion_mask(adc, zadc).sum()) / brain if brain else 0.0


def roi_fractions(lesion: np.ndarray, atlas: np.ndarray) -> dict[int, float]:
    """Lesion share of every ROI of the table (voxels with a lesion / voxels of the ROI)."""
    size = np.bincount(atlas.ravel().astype(np.int64), minlength=200)
    hit = np.bincount(atlas[lesion].ravel().astype(np.int64), minlength=200)
    return {rid: (float(hit[rid]) / float(size[rid]) if size[rid] else 0.0) for rid in roi_table()}


def injured_rois(fractions: Mapping[int, float], threshold: float = DEFAULT_ROI_THRESHOLD) -> list[int]:
    """ROIs whose lesion fraction reaches ``threshold``, in table order."""
    return [rid for rid in roi_table() if fractions.get(rid, 0.0) >= threshold]


def uncommon_rois(injured: Iterable[int]) -> list[int]:
    """N2.5: injured ROIs outside the primary HIE regions (order kept)."""
    primary = set(PRIMARY)
    return [r for r in injured if r not in primary]


def _share(fractions: Mapping[int, float], sizes: Mapping[int, int], group: Iterable[int]) -> float:
    g = list(group)
    total = sum(sizes.get(r, 0) for r in g)
    return sum(fractions.get(r, 0.0) * sizes.get(r, 0) for r in g) / total if total else 0.0


def math_score(
    fractions: Mapping[int, float], sizes: Mapping[int, int] | None = None, threshold: float = DEFAULT_ROI_THRESHOLD
) -> int:
    """The quantitative ("math") MRI injury score, 0–3.

    0 none; 1 white-matter injury only; 2 injury in GM, BGT, ALIC or PLIC with that region's lesion
    share < 75 %; 3 GM and WM both > 75 %, or BGT / ALIC / PLIC > 75 %. A region's share is the largest
    single-ROI fraction for BGT, ALIC and PLIC and the size-weighted share of the whole group for GM
    and WM (``sizes``: ROI voxel counts; equal weights when omitted). A group "has injury" when one of
    its ROIs is injured (fraction ≥ ``threshold``, the N2 rule), so a lesion's rim spilling a few voxels
    into the cortex does not turn a white-matter lesion into grey-matter injury. Lesions outside these
    groups (cerebellum, brainstem, ventricles…) do not enter the score.
    """
    sizes = sizes or {r: 1 for r in roi_table()}
    deep = max(fractions.get(r, 0.0) for r in (*BGT, *ALIC, *PLIC))
    gm, wm = _share(fractions, sizes, GM), _share(fractions, sizes, WM)
    if (gm > 0.75 and wm > 0.75) or deep > 0.75:
        return 3

    def hit(group) -> bool:
        return any(fractions.get(r, 0.0) >= threshold for r in group)

    if hit((*BGT, *ALIC, *PLIC, *GM)):
        return 2
    if hit(WM):
        return 1
    return 0


def clinic_score(injured: Iterable[int], lesion_p: float) -> int:
    """The NICHD-style ("clinic") score, 0–3, from the injured-ROI set and the lesion fraction.

    0 no injury; 1 minimal or more extensive cerebral injury without BGT, ALIC, PLIC or watershed
    injury; 2 any BGT, ALIC, PLIC or watershed injury; 3 cerebral hemispheric devastation (here:
    lesion fraction > 50 %, i.e. grade 4).
    """
    inj = set(injured)
    if lesion_p > 0.5:
        return 3
    if inj & set(BGT + ALIC + PLIC + WATERSHED):
        return 2
    if inj or lesion_p > 0:
        return 1
    return 0


def outcome_probability(score: int, prognostic_injury: bool, a: float, b: float, c: float) -> float:
    """P(adverse 2-year outcome) = sigmoid(a·score + b·[vermis/cerebellum/brainstem/hippocampus injured] + c)."""
    return 1.0 / (1.0 + math.exp(-(a * score + b * float(prognostic_injury) + c)))


def caption(case_id: str, p: float, injured: Iterable[int], uncommon: Iterable[int], score: int | None) -> str:
    """N5's template (the reference's task 5), filled from p (0–1), region ids, uncommon ids and the score."""
    names = roi_table()
    if p <= 0:
        return f"The {case_id} MRI shows no brain volume injured."
    inj = [names.get(r, str(r)) for r in injured]
    unc = [names.get(r, str(r)) for r in uncommon]
    parts = [f"The {case_id} MRI shows {100 * p:.2f}% of the brain volume injured."]
    parts.append(f"The affected regions include {', '.join(inj)}." if inj else "No region is substantially affected.")
    if unc:
        parts.append(f"For uncommon areas, {', '.join(unc)} are not typical locations of HIE injury.")
    if score is not None:
        parts.append(f"The MRI injury score for this MRI is Score {score}.")
    return " ".join(parts)
