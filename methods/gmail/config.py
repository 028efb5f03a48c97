"""GMAIL's options (spec gmail.md §3, §6), the reproducer presets and the paper's numbers (§4).

Defaults follow the spec where it gives them: LoRA rank 4 on the vision tower's q/k/v/out, τ = 0.07,
AdamW with weight decay 0.01, batch 256, cosine annealing with warm restarts, gradient clipping,
μ = 1.0 (not given in the paper), real images at inference through the original encoder. Shrunk for
the CPU: steps (50k → hundreds) and so the learning rate (1e-4 → 2e-3: hundreds of steps, not 50k).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Generator = Literal["artifact"]
Arm = Literal["zero-shot", "real-only", "naive", "dual-noalign", "gmail"]
#: stage-2 arms, in report order (spec §6 baselines (i)–(iv)); "zero-shot" is the untouched backbone.
ARMS: tuple[str, ...] = ("zero-shot", "real-only", "naive", "dual-noalign", "gmail")
ARM_TEXT = {
    "zero-shot": "frozen tiny CLIP, no stage 2",
    "real-only": "(i) stage 2 on the real renders through f_r",
    "naive": "(ii) generated images through f_r as if real (no alignment)",
    "dual-noalign": "(iii) dual encoder f_g trained with μ·L_CLIP only (no L_align)",
    "gmail": "(iv) GMAIL: f_g aligned with L_align + μ·L_CLIP, stage 2 through f_g",
}


class GmailConfig(BaseModel):
    """One GMAIL experiment at one artifact strength and seed (stage 1, stage 2, evaluation)."""

    model_config = ConfigDict(extra="forbid")

    generator: Generator = Field(
        "artifact",
        description="Generator of the 'generated' images: artifact = the spec §5 renderer (the same caption "
        "re-rendered with colour cast, checkerboard, blur and texture noise).",
    )
    artifact_strength: float = Field(1.0, ge=0.0, le=2.0, description="Strength of the generator artifacts (0 = none).")
    n_train: int = Field(2000, ge=64, le=20000, description="Real/generated training pairs.")
    n_test: int = Field(1000, ge=32, le=5000, description="Held-out pairs (real test images; generated for the gap).")
    rank: int = Field(4, ge=1, le=32, description="LoRA rank r of f_g (spec: 4).")
    lora_alpha: float = Field(4.0, gt=0, le=128, description="LoRA scale α (update scaled by α/r).")
    tau: float = Field(0.07, gt=0, le=1.0, description="Temperature τ of L_align (spec: 0.07).")
    mu: float = Field(1.0, ge=0.0, le=10.0, description="Weight μ of the generated image–caption CLIP loss in stage 1.")
    stage1_steps: int = Field(200, ge=1, le=20000, description="Stage-1 steps (spec: 50k).")
    stage2_steps: int = Field(100, ge=1, le=20000, description="Stage-2 steps per arm.")
    caption_steps: int = Field(200, ge=0, le=20000, description="Captioner steps per arm (0: no captioning demo).")
    batch_size: int = Field(256, ge=8, le=1024, description="Pairs per step (spec: 256).")
    lr: float = Field(
        2e-3, gt=0, le=1.0, description="Peak learning rate of stages 1 and 2 (spec 1e-4 over 50k steps)."
    )
    weight_decay: float = Field(0.01, ge=0, le=1.0, description="AdamW weight decay (spec: 0.01).")
    restarts: int = Field(2, ge=1, le=20, description="Cosine cycles (warm restarts) over the run.")
    real_inference_encoder: Literal["original", "lora"] = Field(
        "original",
        description="Real test images through f_r (original, Algorithm 1) or the LoRA tower + Proj for Real.",
    )
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset (methods.vlm).")
    seed: int = Field(0, ge=0, le=10_000, description="Seed of training (the pairs are fixed per split).")


#: ``paperworks reproduce gmail`` presets (fields of the reproducer's options).
PRESETS: dict[str, dict] = {
    "quick": {
        "seeds": 1,
        "strengths": [1.0],
        "n_train": 128,
        "n_test": 64,
        "stage1_steps": 3,
        "stage2_steps": 3,
        "caption_steps": 5,
        "batch_size": 32,
        "backbone": "test",
    },
    "default": {"seeds": 3, "strengths": [0.5, 1.5]},
}

#: Paper numbers quoted in spec §4 (COCO unless stated; SD-v2 generated images, CLIP of unstated size).
PAPER = {
    "coco_i2t": {"CLIP": (51.8, 76.8, 84.3), "CLIP + GMAIL": (56.8, 80.1, 87.2)},
    "coco_t2i": {"CLIP": (32.7, 57.7, 68.2), "CLIP + GMAIL": (37.5, 62.7, 73.2)},
    "clipcap_b4": {"ClipCap": 32.15, "ClipCap + GMAIL": 38.12, "alignment off": 36.15},
    "paired_cosine": (0.52, 0.89),
}
