"""LADA options (spec lada.md §3, §6), the baselines' options, and named presets.

Defaults are the spec's (λ1 = 16, λ2 = 4, β = 5, α = 1, AdaptFormer bottleneck 64 / scale 0.1,
AdamW lr 1e-3 for W and 1e-4 for the adapters, batch 64, diagonal GMM). The spec marks the
optimiser schedule as unverified and sized for ViT-B/16 on full datasets; the ``cpu`` preset
(used by ``reproduce lada``) trains the 16-shot tiny-CLIP stream for more epochs with larger
steps, which the spec's §6 allows ("epochs, β/α defaults" may differ).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class LadaConfig(BaseModel):
    """LADA = text-side AdaptFormer (BF) + distribution-preserved training (DPT) + label-specific memory."""

    model_config = ConfigDict(extra="forbid")

    lambda1: int = Field(16, ge=1, le=256, description="λ1: memory vectors per label (k-means centres).")
    lambda2: int = Field(4, ge=1, le=64, description="λ2: GMM components (prototypes) stored per old class.")
    beta: float = Field(5.0, gt=0, le=100, description="β of h = Σ_r exp(−β(1 − w_r·i)).")
    alpha: float = Field(1.0, ge=0, le=100, description="Inference weight of the LADA scores (seen classes).")
    alpha_sweep: tuple[Annotated[float, Field(ge=0, le=100)], ...] = Field(
        (), max_length=8, description="Extra heads scoring the same trained model with these α (inference only)."
    )
    use_memory: bool = Field(True, description="Label-specific memory units (False = BF / BF+DPT ablation).")
    train_text_adapter: bool = Field(True, description="Tune the text encoder with AdaptFormer adapters (BF).")
    adapter_bottleneck: int = Field(64, ge=1, le=1024, description="AdaptFormer bottleneck width.")
    adapter_scale: float = Field(0.1, gt=0, le=10, description="AdaptFormer output scale s.")
    prompt: str = Field("a photo of a {}.", min_length=3, max_length=100, description="Class prompt; {} = name.")
    prototypes: Literal["gmm", "centres", "none"] = Field(
        "gmm",
        description="Old-class loss: gmm = DPT (GMM means + trace-scaled noise, π-weighted CE); "
        "centres = BF's k-means centres, unweighted, no noise; none = no old-task loss.",
    )
    gmm_covariance: Literal["diag", "full"] = Field("diag", description="GMM covariance type (spec §6: diag on CPU).")
    renormalize_prototypes: bool = Field(True, description="Re-normalise augmented prototypes to unit norm.")
    old_loss_reduction: Literal["sum", "mean"] = Field(
        "sum", description="Old-task loss over old classes: sum (spec Eq. 4/10) or mean."
    )
    epochs: int = Field(10, ge=0, le=500, description="Epochs per task.")
    batch_size: int = Field(64, ge=1, le=4096)
    lr_memory: float = Field(1e-3, gt=0, le=10, description="AdamW lr of the current task's memory vectors W^k.")
    lr_adapter: float = Field(1e-4, gt=0, le=10, description="AdamW lr of the text adapters.")
    weight_decay: float = Field(0.0, ge=0, le=1, description="AdamW weight decay.")


class ZeroShotConfig(BaseModel):
    """Zero-shot CLIP over the union label space (no training)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field("a photo of a {}.", min_length=3, max_length=100, description="Class prompt; {} = name.")


class FinetuneConfig(BaseModel):
    """Sequential fine-tuning of the whole CLIP (both towers); with ``kd_lambda`` > 0 it is LwF."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field("a photo of a {}.", min_length=3, max_length=100, description="Class prompt; {} = name.")
    epochs: int = Field(10, ge=0, le=500, description="Epochs per task.")
    batch_size: int = Field(64, ge=1, le=4096)
    lr: float = Field(1e-4, gt=0, le=10, description="AdamW learning rate.")
    weight_decay: float = Field(0.0, ge=0, le=1)
    kd_lambda: float = Field(0.0, ge=0, le=1000, description="LwF: weight of KD on the old model's seen-class logits.")
    kd_temperature: float = Field(2.0, gt=0, le=100, description="LwF KD temperature T.")


class RailConfig(BaseModel):
    """Primal-RAIL: ReLU random expansion + recursive ridge regression, fused with zero-shot CLIP via a domain selector."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field("a photo of a {}.", min_length=3, max_length=100, description="Class prompt; {} = name.")
    hidden_dim: int = Field(
        2048, ge=8, le=32768, description="Width of the random ReLU expansion (RAIL: 15000 for d=512)."
    )
    ridge: float = Field(0.1, gt=0, le=1e6, description="Ridge regularisation γ (RAIL: 0.1).")
    fusion_weight: float = Field(0.9, ge=0, le=1, description="Weight of the adapter in the fusion (RAIL: 0.9).")


#: Options the ``cpu`` preset (reproduce) uses for LADA and the fine-tuning baselines.
CPU_LADA = {"epochs": 30, "lr_memory": 1e-2, "lr_adapter": 1e-3}
CPU_FINETUNE = {"epochs": 10, "lr": 1e-4}

LADA_PRESETS: dict[str, dict] = {"spec": {}, "cpu": CPU_LADA, "quick": {"epochs": 2, "lambda1": 4, "lambda2": 2}}
FINETUNE_PRESETS: dict[str, dict] = {"spec": {}, "cpu": CPU_FINETUNE, "quick": {"epochs": 1}}

#: The arms of ``reproduce lada``: (key, registered learner, options, label).
ARMS: tuple[tuple[str, str, dict, str], ...] = (
    ("zeroshot", "xtail_zeroshot", {}, "Zero-shot CLIP"),
    ("finetune", "xtail_finetune", CPU_FINETUNE, "Fine-tune (full CLIP)"),
    ("lwf", "xtail_lwf", dict(CPU_FINETUNE, kd_lambda=1.0), "LwF (full CLIP + KD)"),
    ("rail", "xtail_rail", {}, "Primal-RAIL (adapter baseline)"),
    ("bf", "lada", dict(CPU_LADA, use_memory=False, prototypes="centres"), "BF (AdaptFormer, centre prototypes)"),
    ("bf_dpt", "lada", dict(CPU_LADA, use_memory=False), "BF + DPT"),
    ("lada_noproto", "lada", dict(CPU_LADA, prototypes="none"), "BF + LADA, no old-task loss"),
    ("lada", "lada", dict(CPU_LADA, alpha_sweep=(0.25, 0.5, 2.0)), "LADA (BF + DPT + memory)"),
)

#: The spec's β sweep (§3.2: {1, 3, 5, 7}); β = 5 is the ``lada`` arm itself.
BETA_SWEEP: tuple[tuple[str, str, dict, str], ...] = tuple(
    (f"lada_beta{b:g}", "lada", dict(CPU_LADA, beta=float(b)), f"LADA, β = {b:g}") for b in (1, 3, 7)
)
