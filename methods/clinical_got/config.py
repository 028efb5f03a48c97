"""The synthetic HIE-Reasoning stand-in's knobs (spec §5): size, seed, lesion patterns, outcome model."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field


class BenchConfig(BaseModel):
    """How the synthetic benchmark is drawn. The same config and seed give the same cases, byte for byte."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_cases: int = Field(133, ge=1, le=2000, description="Cases (paper: 133 individuals).")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Generator seed.")
    shape: tuple[int, int, int] = Field((64, 64, 24), description="Volume size (x, y, slices).")
    roi_threshold: float = Field(0.225, gt=0.0, lt=1.0, description="ROI lesion fraction counted as injured.")
    lesion_free: float = Field(0.25, ge=0.0, le=1.0, description="Share of lesion-free cases (spec: 20–30 %).")
    near_total: float = Field(0.1, ge=0.0, le=1.0, description="Share of near-total injury cases.")
    bgt_pattern: float = Field(0.3, ge=0.0, le=1.0, description="Share of BGT/PLIC-predominant cases.")
    rare_blob: float = Field(0.25, ge=0.0, le=1.0, description="Chance of an extra blob in a rare location.")
    outcome_a: float = Field(2.5, description="Outcome model: weight of the MRI injury score.")
    outcome_b: float = Field(1.5, description="Outcome model: weight of vermis/cerebellum/brainstem/hippocampus.")
    outcome_c: float = Field(-4.6, description="Outcome model: intercept (sets the adverse share, ≈ 1/3).")

    def key(self) -> str:
        """A short hash naming this benchmark (cache folders, DB rows)."""
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[:12]

    def case_ids(self) -> list[str]:
        return [f"case{i:03d}" for i in range(self.n_cases)]
