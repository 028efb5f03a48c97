"""Registered job ``gmail.align`` (one strength and seed: stage 1, stage 2 arms, captioning, the gap) and
the reproducer ``gmail`` (strengths × seeds, spec §7 checks, docs/results/gmail.md).

Queue ``cpu``: the tiny CLIP's towers are milliseconds per batch; one experiment is minutes on a core.
Both take ``device`` (cpu | auto | cuda) and ``amp`` (off | bf16): the backbone, the pairs and every
trained model live there; reports record the device, dtype and GPU name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.gmail.config import PRESETS, GmailConfig


class AlignParams(GmailConfig, DeviceParams):
    """One GMAIL experiment (see :class:`methods.gmail.config.GmailConfig`), its device and its thread count."""

    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_method(
    "gmail.align", title="GMAIL: align generated images to real ones", queue="cpu",
    tags=("vision-language", "generated-data", "lora"),
)  # fmt: skip
def run_align(params: AlignParams, progress: JobContext) -> Report:
    """Stage 1 (f_g: LoRA + Proj for Gen aligned to frozen f_r with L_align + μ·L_CLIP), stage 2 on real / naive / dual / GMAIL, and the real-vs-generated embedding map at one artifact strength."""
    from methods.gmail.experiment import align_one

    return align_one(params, progress)


class GmailOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce gmail``."""

    PRESETS = PRESETS
    preset: Literal["quick", "default"] = Field(
        "default", description="quick (tests: test backbone, 1 seed, a few steps) or default (docs/results)."
    )
    seeds: int = Field(3, ge=1, le=10, description="Seeds 0..seeds-1 per strength.")
    strengths: list[float] = Field(
        [0.5, 1.0, 1.5], min_length=1, max_length=6, description="Artifact strengths, ascending."
    )
    generator: Literal["artifact"] = Field(
        "artifact", description="Generator of the generated images (spec §5 renderer)."
    )
    n_train: int = Field(2000, ge=64, le=20000, description="Training pairs.")
    n_test: int = Field(1000, ge=32, le=5000, description="Held-out pairs.")
    stage1_steps: int = Field(200, ge=1, le=20000, description="Stage-1 steps.")
    stage2_steps: int = Field(100, ge=1, le=20000, description="Stage-2 steps per arm.")
    caption_steps: int = Field(200, ge=0, le=20000, description="Captioner steps per arm (0: skip).")
    batch_size: int = Field(256, ge=8, le=1024, description="Batch (spec: 256).")
    lr: float = Field(2e-3, gt=0, le=1.0, description="Peak learning rate.")
    mu: float = Field(1.0, ge=0, le=10, description="μ of the stage-1 CLIP loss.")
    restarts: int = Field(2, ge=1, le=20, description="Cosine warm-restart cycles.")
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset.")
    threads: int = Field(1, ge=1, le=64, description="torch threads.")

    @field_validator("strengths")
    @classmethod
    def _ascending(cls, v: list[float]) -> list[float]:
        if any(not 0 <= s <= 2 for s in v):
            raise ValueError("strengths must lie in [0, 2]")
        if v != sorted(set(v)):
            raise ValueError("strengths must be distinct and ascending")
        return v


@register_reproducer("gmail", options=GmailOptions, description="GMAIL: real vs generated modality alignment, 4 arms")
def reproduce(options: GmailOptions, progress: JobContext) -> Report:
    """Every arm at each artifact strength over ``seeds`` seeds; spec §7 checks; the embedding map; paper numbers."""
    from methods.gmail.experiment import reproduce as run

    return run(options, progress)
