"""The seeded synthetic stand-in for the HIE-Reasoning volumes (spec §5).

A case is drawn from ``numpy.random.default_rng([seed, index])`` (so case *i* is the same whatever
``n_cases`` is):

* ADC = per-ROI normative mean μ_r (WM ≈ 1450, cortex ≈ 1250, deep grey ≈ 1120, internal capsule
  ≈ 1080, CSF ≈ 2800 ×10⁻⁶ mm²/s) + σ_r · smooth noise (σ_r = 7 % of μ_r, 15 % in CSF);
* lesions: Gaussian blobs lowering ADC by 25–60 % at their centre, by clinical pattern — none
  (``lesion_free``), watershed/WM-predominant, BGT/PLIC-predominant (``bgt_pattern``) or near-total
  (``near_total``), plus with probability ``rare_blob`` one blob in a rare location;
* Z-ADC = (ADC − μ_r)/σ_r smoothed with a 2 mm-equivalent Gaussian (1 voxel in-plane, ½ through-plane,
  masked), clipped at ±10; lesion = Z-ADC < −2 inside the brain;
* the ground truth by the benchmark's rules (:mod:`methods.clinical_got.rules`) and the 2-year outcome
  ~ Bernoulli(sigmoid(a·score + b·[prognostic region injured] + c)).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.ndimage import gaussian_filter

from methods.clinical_got.atlas import (
    ALIC,
    BGT,
    PLIC,
    PROGNOSTIC,
    VENTRICLES_CSF,
    WATERSHED,
    build_atlas,
    roi_sizes,
    roi_table,
)
from methods.clinical_got.config import BenchConfig
from methods.clinical_got.rules import (
    caption,
    clinic_score,
    grade,
    injured_rois,
    lesion_fraction,
    lesion_mask,
    math_score,
    outcome_probability,
    roi_fractions,
    uncommon_rois,
)

SMOOTH = (1.0, 1.0, 0.5)  # "2 mm" in voxels (in-plane ~2 mm, slices ~4 mm)
PATTERNS = ("none", "watershed", "bgt", "near_total")
WS_TARGETS = (*WATERSHED, 87, 88, 95, 120, 121, 128, 129)
BGT_TARGETS = (*BGT, *ALIC, *PLIC)
RARE_TARGETS = (71, 38, 39, 35, 47, 48, 31, 32, 102, 103, 61, 62, 160, 161)
WIDE, SMALL = (2.5, 6.5), (1.2, 3.0)  # blob radii (voxels): white matter / cortex, deep nuclei and rare sites


def normative_mean(rid: int) -> float:
    """μ_r: the normative ADC of ROI ``rid`` (×10⁻⁶ mm²/s)."""
    if rid in (4, 11, 49, 50, 46):
        return 2800.0
    if rid in (*ALIC, *PLIC):
        return 1080.0
    if rid in (*BGT, 61, 62, 31, 32, 47, 48, 35):
        return 1120.0
    if rid in (81, 82, 83, 84, 85, 86, 87, 88, 95):
        return 1450.0
    if rid in (71, 38, 39):
        return 1200.0
    return 1250.0


@functools.lru_cache(maxsize=4)
def normative_maps(shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(atlas, μ map, σ map) for a volume size; μ and σ are 0 outside the brain."""
    atlas = build_atlas(shape)
    mu = np.zeros(shape, np.float32)
    sd = np.zeros(shape, np.float32)
    for rid in roi_table():
        m = atlas == rid
        mu[m] = normative_mean(rid)
        sd[m] = normative_mean(rid) * (0.15 if rid in (4, 11, 49, 50, 46) else 0.07)
    for arr in (atlas, mu, sd):
        arr.setflags(write=False)
    return atlas, mu, sd


@dataclass
class Case:
    """One synthetic case: volumes and the ground truth derived from them by the rules."""

    case_id: str
    index: int
    pattern: str
    adc: np.ndarray  # float32, 0 outside the brain
    zadc: np.ndarray  # float32, clipped ±10
    mask: np.ndarray  # bool brain mask
    atlas: np.ndarray  # int16 ROI ids
    truth: dict[str, Any] = field(default_factory=dict)


def _smooth_noise(rng: np.random.Generator, shape, sigma) -> np.ndarray:
    n = gaussian_filter(rng.standard_normal(shape), sigma)
    return n / (n.std() + 1e-12)


def _blob(rng, atlas, target_ids, shape, radius: tuple[float, float]) -> tuple[np.ndarray, float]:
    """A Gaussian profile (peak 1) centred on a random voxel of one of ``target_ids``; and its depth f."""
    rid = int(rng.choice(target_ids))
    pts = np.argwhere(atlas == rid)
    cx, cy, cz = pts[rng.integers(len(pts))]
    r = rng.uniform(*radius)
    rz = r * shape[2] / shape[0] * 1.2
    x, y, z = np.ogrid[: shape[0], : shape[1], : shape[2]]
    d2 = ((x - cx) / r) ** 2 + ((y - cy) / r) ** 2 + ((z - cz) / rz) ** 2
    return np.exp(-0.5 * d2), float(rng.uniform(0.25, 0.6))


def _pattern(rng: np.random.Generator, cfg: BenchConfig) -> str:
    x = rng.random()
    if x < cfg.lesion_free:
        return "none"
    x -= cfg.lesion_free
    if x < cfg.near_total:
        return "near_total"
    x -= cfg.near_total
    return "bgt" if x < cfg.bgt_pattern else "watershed"


def _reduction(rng, cfg: BenchConfig, pattern: str, atlas: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Fraction by which ADC is lowered at each voxel (max over blobs, ≤ 0.6; parenchyma only)."""
    shape = atlas.shape
    parenchyma = mask & ~np.isin(atlas, VENTRICLES_CSF)
    red = np.zeros(shape, np.float32)
    if pattern == "none":
        return red
    if pattern == "near_total":
        field_ = 0.5 + 0.35 * _smooth_noise(rng, shape, (6.0, 6.0, 3.0))
        return (np.clip(field_, 0.0, 1.0) * rng.uniform(0.45, 0.6) * parenchyma).astype(np.float32)
    blobs: list[tuple[np.ndarray, float]] = []
    if pattern == "watershed":
        blobs += [_blob(rng, atlas, WS_TARGETS, shape, WIDE) for _ in range(int(rng.integers(1, 5)))]
    else:  # bgt
        blobs += [_blob(rng, atlas, BGT_TARGETS, shape, SMALL) for _ in range(int(rng.integers(1, 3)))]
        blobs += [_blob(rng, atlas, WS_TARGETS, shape, WIDE) for _ in range(int(rng.integers(0, 3)))]
    if rng.random() < cfg.rare_blob:
        blobs.append(_blob(rng, atlas, RARE_TARGETS, shape, SMALL))
    for profile, depth in blobs:
        np.maximum(red, (depth * profile).astype(np.float32), out=red)
    return red * parenchyma


def zadc_from(adc: np.ndarray, mu: np.ndarray, sd: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Z-ADC = (ADC − μ)/σ, smoothed inside the mask (normalised convolution), clipped at ±10."""
    z = np.where(mask, (adc - mu) / np.where(sd > 0, sd, 1.0), 0.0)
    num = gaussian_filter(z, SMOOTH)
    den = gaussian_filter(mask.astype(np.float64), SMOOTH)
    out = np.where(mask, num / np.maximum(den, 1e-6), 0.0)
    return np.clip(out, -10.0, 10.0).astype(np.float32)


def derive_truth(case_id: str, adc, zadc, atlas, cfg: BenchConfig) -> dict[str, Any]:
    """Every ground-truth label of §3.3 from the volumes, by the rules (the outcome is drawn separately)."""
    p = lesion_fraction(adc, zadc)
    fr = roi_fractions(lesion_mask(adc, zadc), atlas)
    injured = injured_rois(fr, cfg.roi_threshold)
    uncommon = uncommon_rois(injured)
    score = math_score(fr, roi_sizes(atlas), cfg.roi_threshold)
    prognostic = bool(set(injured) & set(PROGNOSTIC))
    return {
        "lesion_p": p,
        "grade": grade(p),
        "roi_fractions": {str(k): round(v, 6) for k, v in fr.items() if v > 0},
        "injured": injured,
        "uncommon": uncommon,
        "rare_any": bool(uncommon),
        "score": score,
        "score_clinic": clinic_score(injured, p),
        "prognostic_injury": prognostic,
        "p_adverse": outcome_probability(score, prognostic, cfg.outcome_a, cfg.outcome_b, cfg.outcome_c),
        "caption": caption(case_id, p, injured, uncommon, score),
    }


def make_case(cfg: BenchConfig, index: int) -> Case:
    """Case ``index`` of the benchmark ``cfg`` (deterministic)."""
    rng = np.random.default_rng([cfg.seed, index])
    atlas, mu, sd = normative_maps(tuple(cfg.shape))
    mask = atlas > 0
    noise = _smooth_noise(rng, atlas.shape, SMOOTH) * 0.4
    pattern = _pattern(rng, cfg)
    red = _reduction(rng, cfg, pattern, atlas, mask)
    adc = np.where(mask, (mu + sd * noise) * (1.0 - red), 0.0).astype(np.float32)
    adc = np.where(mask, np.maximum(adc, 1.0), 0.0).astype(np.float32)  # ADC > 0 is the brain
    zadc = zadc_from(adc, mu, sd, mask)
    case_id = f"case{index:03d}"
    truth = derive_truth(case_id, adc, zadc, atlas, cfg)
    truth["outcome"] = int(rng.random() < truth["p_adverse"])
    truth["pattern"] = pattern
    return Case(case_id, index, pattern, adc, zadc, mask, atlas, truth)


def case_index(case_id: str) -> int:
    if not case_id.startswith("case") or not case_id[4:].isdigit():
        raise ValueError(f"not a case id: {case_id!r} (want caseNNN)")
    return int(case_id[4:])


def bayes_decision(truth: dict[str, Any]) -> int:
    """The best outcome guess given the true score and regions: adverse iff P(adverse) > 0.5."""
    return int(truth["p_adverse"] > 0.5)
