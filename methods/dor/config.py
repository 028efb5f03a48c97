"""DOR's options (spec dor.md §3–§6) and the reproducer's presets.

Defaults follow the spec's CPU-scale version: 20 noun classes (10 base / 10 new), 16 shots,
K = 500 near-OOD WordNet nouns, B = 64 per step, λ = 8 for CoOp and 2 for the other hosts,
KgCoOp's λ_kg = 8, 10 equal-width ECE bins.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Host = Literal["coop", "kgcoop"]
LAMBDA_DOR: dict[str, float] = {"coop": 8.0, "kgcoop": 2.0}  # spec §3.3: λ = 8 for CoOp, 2 for all others


class TuneConfig(BaseModel):
    """One prompt-tuning run: host method, optional DOR regulariser, schedule, outliers."""

    model_config = ConfigDict(extra="forbid")

    host: Host = Field(
        "coop", description="Host prompt-tuning method: coop (CE only) or kgcoop (+ λ_kg·‖w − w_clip‖²)."
    )
    dor: bool = Field(True, description="Add DOR's outlier regulariser λ·L_DOR.")
    n_ctx: int = Field(16, ge=1, le=24, description="Learnable context tokens (random init; ignored with ctx_init).")
    ctx_init: str | None = Field(
        None,
        max_length=60,
        description='Initialise the context from this phrase\'s token embeddings (e.g. "a photo of a"); '
        "None = CoOp's random N(0, 0.02²) init. Default per host: coop random, kgcoop from the template.",
    )
    epochs: int = Field(200, ge=1, le=1000, description="Epochs over the few-shot base set (spec: 200).")
    batch_size: int = Field(32, ge=1, le=1024, description="Images per step (spec: 32).")
    lr: float = Field(2e-3, gt=0, le=1.0, description="Peak learning rate (AdamW; the spec's SGD uses 0.002).")
    weight_decay: float = Field(5e-4, ge=0, le=1.0)
    lambda_dor: float | None = Field(None, ge=0, le=100, description="λ of L_DOR; None = 8 for coop, 2 for kgcoop.")
    lambda_kg: float = Field(8.0, ge=0, le=100, description="KgCoOp's λ_kg.")
    outlier_k: int = Field(500, ge=1, le=60000, description="Outlier pool size K (spec: 5000 at full scale).")
    outlier_batch: int = Field(64, ge=1, le=1024, description="Outliers B drawn per step.")
    pool: Literal["near", "far", "random", "oracle"] = Field(
        "near", description="near = top-K by similarity to the base classes (DOR); far / random / oracle are ablations."
    )
    resample: Literal["step", "epoch"] = Field(
        "step", description="Draw a fresh outlier subset every step or every epoch."
    )
    adjectives: bool = Field(False, description="Also use WordNet adjectives as candidates.")
    views: int = Field(4, ge=1, le=32, description="Augmented views (random resized crop + flip) per training image.")
    n_bins: int = Field(10, ge=2, le=50, description="ECE bins.")

    def effective_lambda(self) -> float:
        return self.lambda_dor if self.lambda_dor is not None else LAMBDA_DOR[self.host]

    def effective_init(self) -> str | None:
        if self.ctx_init is not None:
            return self.ctx_init or None
        return "a photo of a" if self.host == "kgcoop" else None


class TaskConfig(BaseModel):
    """The base-to-new task: dataset, split of the classes, shots."""

    model_config = ConfigDict(extra="forbid")

    dataset: Literal["objects20", "objects", "digits"] = Field(
        "objects20", description="A methods.vlm dataset; the first n_base class ids are base, the rest new."
    )
    n_base: int = Field(10, ge=1, le=40, description="Base classes (the first ids); the others are new.")
    shots: int = Field(16, ge=1, le=32, description="Training images per base class.")


#: ``paperworks reproduce dor`` presets (fields of the reproducer's options).
PRESETS: dict[str, dict] = {
    "quick": {
        "seeds": 2,
        "epochs": 4,
        "outlier_k": 50,
        "outlier_batch": 8,
        "backbone": "test",
        "views": 1,
        "ablation_seeds": 2,
    },  # fmt: skip
    "default": {"seeds": 10, "epochs": 100, "ablation_seeds": 3},
    "spec": {"seeds": 10, "epochs": 200, "ablation_seeds": 3},
}
