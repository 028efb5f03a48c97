"""DPCR options (spec §3 and §6) and named presets.

The options model doubles as the harness's options schema for ``continual.run`` with
``method="dpcr"``, so every knob is validated and described.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Arm = Literal["lwf", "ridge_uncal", "tssp", "dpcr", "dpcr_literal", "dpcr_revive", "oracle"]
#: The spec's comparison arms (the default heads).
ALL_ARMS: tuple[Arm, ...] = ("lwf", "ridge_uncal", "tssp", "dpcr", "dpcr_literal", "oracle")
#: Arms that rebuild a ridge classifier from stored statistics (they can be refit with other γ).
RIDGE_ARMS: tuple[str, ...] = ("ridge_uncal", "tssp", "dpcr", "dpcr_literal", "dpcr_revive")
ARM_LABELS: dict[str, str] = {
    "lwf": "(a) LwF, own cosine head",
    "ridge_uncal": "(b) LwF + ridge, uncalibrated stats",
    "tssp": "(c) TSSP only (W_c = P_t)",
    "dpcr": "(d) DPCR (P_t Π_c, relative tol)",
    "dpcr_literal": "(d') DPCR, literal s > 0 projector",
    "dpcr_revive": "(d'') DPCR, dead units may revive [not in paper]",
    "oracle": "(e) oracle statistics (upper bound)",
}


class DPCRConfig(BaseModel):
    """Backbone schedule (LwF) and DPCR's closed-form parts; defaults = spec §6 (digits)."""

    model_config = ConfigDict(extra="forbid")

    # backbone (spec §6): conv(1→c1) → conv(c1→c2) → maxpool 2 → conv(c2→c3) → GAP, d = c3
    channels: tuple[int, int, int] = Field((32, 64, 64), description="Conv widths; the feature dim d is the last.")
    head: Literal["cosine", "linear"] = Field("cosine", description="Training head (LwF's own classifier).")
    cosine_scale_init: float = Field(1.0, gt=0, le=100, description="Initial learnable scale σ of the cosine head.")
    augment_shift: int = Field(1, ge=0, le=3, description="Random shift augmentation, ± pixels.")
    batch_size: int = Field(64, ge=1, le=4096)
    momentum: float = Field(0.9, ge=0, lt=1)
    # task 1: cross-entropy
    epochs_first: int = Field(60, ge=0, le=1000)
    lr_first: float = Field(0.1, gt=0, le=10)
    milestones_first: tuple[int, ...] = Field((20, 40, 50), description="Epochs where lr ×0.1 (task 1).")
    wd_first: float = Field(5e-4, ge=0, le=1)
    # tasks >= 2: LwF, L = CE(new logits) + λ_KD · KD(old logits, T)
    epochs_inc: int = Field(30, ge=0, le=1000)
    lr_inc: float = Field(0.05, gt=0, le=10)
    milestones_inc: tuple[int, ...] = Field((15, 25), description="Epochs where lr ×0.1 (tasks ≥ 2).")
    wd_inc: float = Field(2e-4, ge=0, le=1)
    kd_lambda: float = Field(10.0, ge=0, le=1000, description="λ_KD.")
    kd_temperature: float = Field(2.0, gt=0, le=100, description="KD temperature T.")
    # DPCR closed-form parts
    gamma: float | None = Field(
        None, gt=0, le=1e8, description="Ridge γ of RRCR; None = pick from gamma_grid on a held-out part of task 1."
    )
    gamma_grid: tuple[float, ...] = Field((1.0, 10.0, 100.0), min_length=1, max_length=10)
    gamma_holdout: float = Field(0.2, gt=0, lt=0.9, description="Held-out fraction of task 1 for picking γ.")
    gamma_p: float = Field(1e-9, gt=0, le=1e3, description="TSSP ridge γ_p (rg_tssp).")
    tssp_passes: int = Field(
        1,
        ge=1,
        le=32,
        description="Augmented passes over the task's data for TSSP "
        "(the reference makes one; more keep the regression well-posed when n_t ≤ d).",
    )
    current_term: Literal["augmented", "clean"] = Field(
        "augmented",
        description="Current task's ridge term: from the augmented pass(es) through f_t, as the "
        "reference does (Gram averaged over passes), or from the stored clean statistics.",
    )
    count_constant: int | None = Field(
        None,
        ge=1,
        le=10**6,
        description="Use this constant N_c in Q (the reference's num_per_class) instead of the true class counts.",
    )
    arms: tuple[Arm, ...] = Field(ALL_ARMS, min_length=1, description="Heads to evaluate (comparison arms).")
    gamma_sweep: tuple[float, ...] = Field(
        (),
        max_length=10,
        description="Extra heads <arm>_g<γ>: each arm of gamma_sweep_arms refit with each of these γ "
        "(stability/plasticity sweep).",
    )
    gamma_sweep_arms: tuple[str, ...] = Field(
        ("dpcr",),
        max_length=5,
        description="Ridge arms refit over gamma_sweep (default: the DPCR arm only).",
    )
    feature_batch: int = Field(512, ge=1, le=8192, description="Batch size for feature extraction.")

    @model_validator(mode="after")
    def _check(self) -> DPCRConfig:
        if len(set(self.arms)) != len(self.arms):
            raise ValueError("arms must not repeat")
        if self.gamma_sweep:
            bad = [a for a in self.gamma_sweep_arms if a not in RIDGE_ARMS or a not in self.arms]
            if bad:
                raise ValueError(f"gamma_sweep_arms must be ridge arms that are in arms; not: {bad}")
        if any(g <= 0 for g in self.gamma_sweep):
            raise ValueError("gamma_sweep values must be > 0")
        return self


def digits_config(**overrides) -> DPCRConfig:
    """Spec §6 schedule: task 1 60 epochs {20,40,50}, later tasks 30 epochs {15,25}."""
    return DPCRConfig(**overrides)


def tiny_config(**overrides) -> DPCRConfig:
    """A few epochs and narrow convs: for tests and smoke runs only."""
    base = dict(channels=(8, 16, 16), epochs_first=3, milestones_first=(2,), epochs_inc=2, milestones_inc=(1,))
    base.update(overrides)
    return DPCRConfig(**base)


#: Named presets of the ``dpcr`` learner (``continual.run`` options), overriding DPCRConfig's defaults.
PRESETS: dict[str, dict] = {
    "quick": {
        "channels": [8, 16, 16],
        "epochs_first": 3,
        "milestones_first": [2],
        "epochs_inc": 2,
        "milestones_inc": [1],
        "tssp_passes": 4,
    },
    "spec": {},
    "reproduce": {"tssp_passes": 8, "gamma_sweep": [0.1, 1.0, 10.0, 100.0, 1000.0]},
}
