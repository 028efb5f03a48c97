"""Registered job ``dor.tune`` (one calibrated prompt-tuning run) and the reproducer ``dor``.

Queue ``cpu``: image features are computed once by the frozen encoder; each step is a text-tower
pass over 10 class prompts and B = 64 outlier prompts through a tiny CLIP, milliseconds on a core.
``device`` / ``amp`` (:class:`core.device.DeviceParams`) put the backbone, the features and the
tuning there; the report records where it ran.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.dor.config import PRESETS, TaskConfig, TuneConfig


class TuneParams(TaskConfig, TuneConfig, DeviceParams):
    """A base-to-new task and one host (± DOR) on it."""

    seed: int = Field(
        1, ge=0, le=10_000, description="Seed of the few-shot draw, the context init and the outlier draws."
    )
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset (methods.vlm).")
    clip_dir: str | None = Field(
        None,
        max_length=200,
        description="A saved CLIPModel folder under <home>/models to use instead of the tiny CLIP.",
    )
    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_method(
    "dor.tune", title="DOR: calibrated prompt tuning", queue="cpu", tags=("vision-language", "calibration")
)
def run_tune(params: TuneParams, progress: JobContext) -> Report:
    """Tune CoOp or KgCoOp (± DOR's outlier regulariser) on the base classes; report base/new accuracy, ECE/ACE/MCE and reliability diagrams against zero-shot."""
    from methods.dor.experiment import tune_one

    return tune_one(params, progress)


class DorOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce dor``."""

    PRESETS = PRESETS
    preset: Literal["quick", "default", "spec"] = Field(
        "default",
        description="quick (tests: tiny backbone, 2 seeds), default (docs/results: 10 seeds), spec (200 epochs).",
    )
    seeds: int = Field(10, ge=1, le=30, description="Seeds 1..seeds (every arm on each: paired differences).")
    epochs: int = Field(100, ge=1, le=1000, description="Epochs per run (spec: 200).")
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset.")
    clip_dir: str | None = Field(None, max_length=200, description="A saved CLIPModel folder under <home>/models.")
    dataset: Literal["objects20", "objects", "digits"] = Field("objects20", description="methods.vlm dataset.")
    n_base: int = Field(10, ge=1, le=40, description="Base classes (first ids).")
    shots: int = Field(16, ge=1, le=32, description="Shots per base class.")
    outlier_k: int = Field(500, ge=1, le=60000, description="Outlier pool size K.")
    outlier_batch: int = Field(64, ge=1, le=1024, description="Outliers per step B.")
    views: int = Field(4, ge=1, le=32, description="Augmented views per training image.")
    n_bins: int = Field(10, ge=2, le=50, description="ECE bins.")
    ablations: bool = Field(True, description="Also run CoOp+DOR with the far / random / oracle pools.")
    ablation_seeds: int = Field(3, ge=1, le=30, description="Seeds (the first ones) that run the pool ablation.")
    tolerance: float = Field(1.0, ge=0, le=10, description="Base-accuracy tolerance of the §7.5 check (points).")
    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_reproducer(
    "dor", options=DorOptions, description="DOR base-to-new calibration: zero-shot, CoOp, KgCoOp, ±DOR"
)
def reproduce(options: DorOptions, progress: JobContext) -> Report:
    """Every arm over ``seeds`` seeds on the 10/10 base-to-new split; the headline claims as paired per-seed differences; reliability diagrams."""
    from methods.dor.experiment import reproduce as run

    return run(options, progress)
