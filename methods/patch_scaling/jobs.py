"""Registered job ``patch_scaling.train`` (one backbone × p × seed) and the reproducer ``patch_scaling``.

Queue: ``cpu`` (``device=cuda`` sends a job to the ``gpu`` queue). The models are ~0.2M parameters
on 8×8 digits; the reproducer fans the (backbone, p, seed) runs out as jobs
(:func:`core.jobs.dispatch.enqueue`/``wait``) when a worker is configured, and runs them in this
process otherwise. Every run takes the sweep's ``device`` and ``amp``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.patch_scaling.config import PRESETS

BackboneName = Literal["vit", "adventurer"]


class TrainParams(DeviceParams):
    backbone: BackboneName = Field("adventurer", description="Tiny-ViT or Tiny-Adventurer (spec §6).")
    patch: Literal[16, 8, 4, 2, 1] = Field(
        1, description="Patch size p (kernel = stride = p); 1 = one token per pixel."
    )
    seed: int = Field(0, ge=0, le=10_000, description="Seed of the model init and batch order (the split is fixed).")
    image_size: Literal[8, 16] = Field(8, description="8 = digits as is; 16 = bilinear-upsampled digits.")
    epochs: int = Field(100, ge=1, le=300, description="Training epochs (spec: 100).")
    flip_rule: Literal["released", "alternate", "none"] = Field(
        "released", description="Adventurer flips: released code (layers 2, 3), alternate (every two blocks), none."
    )

    @model_validator(mode="after")
    def _divides(self) -> TrainParams:
        if self.patch > self.image_size:
            raise ValueError("patch must not exceed image_size")
        return self


@register_method("patch_scaling.train", title="Patch scaling: train one (backbone, p, seed)", queue="cpu")
def run_train(params: TrainParams, progress: JobContext) -> Report:
    """Train Tiny-ViT or Tiny-Adventurer on digits at patch size p; test accuracy, FLOPs and wall-clock."""
    from methods.patch_scaling.train import train_eval

    r = train_eval(
        params.backbone,
        params.patch,
        params.seed,
        image_size=params.image_size,
        epochs=params.epochs,
        flip_rule=params.flip_rule,
        device=params.device,
        amp=params.amp,
        progress=progress,
    )
    report = Report(
        title=f"{params.backbone} p={params.patch} seed={params.seed}",
        summary=f"test accuracy {r['accuracy']:.3f} with {r['tokens']} tokens (+1 class), {r['flops'] / 1e6:.2f} MFLOPs",
    )
    report.metrics.update({k: r[k] for k in ("accuracy", "final_loss", "tokens", "flops", "params", "train_s")})
    report.metrics.update({k: r[k] for k in ("device", "dtype", "gpu") if k in r})
    report.data = {"result": r}
    return report


class SweepParams(DeviceParams):
    model_config = ConfigDict(extra="forbid")

    image_size: Literal[8, 16] = Field(8, description="Input size S.")
    patches: list[Literal[16, 8, 4, 2, 1]] = Field(
        [8, 4, 2, 1], min_length=2, max_length=5, description="Patch sizes p."
    )
    seeds: int = Field(1, ge=1, le=10, description="Seeds per (backbone, p).")
    epochs: int = Field(4, ge=1, le=300, description="Training epochs per run.")
    backbones: list[BackboneName] = Field(["vit", "adventurer"], min_length=1, max_length=2, description="Backbones.")
    dispatch: Literal["auto", "jobs", "inline"] = Field(
        "auto", description="auto: sub-jobs when a worker is configured, else in this process."
    )
    longer_epochs: int = Field(
        0,
        ge=0,
        le=300,
        description="0 = off; else also train p = max(patches) and p = 1 for this many epochs (longer_seeds seeds) "
        "and report them beside the main runs: does p = 1 catch up with more training?",
    )
    longer_seeds: int = Field(1, ge=1, le=10, description="Seeds of the longer runs.")
    variant_size: Literal[0, 16] = Field(
        0,
        description="0 = off; 16 = also sweep 16×16 (upsampled) digits with variant_patches (same backbones, seeds "
        "and epochs), where one p = 16 token must hold 256 pixels in d = 64.",
    )
    variant_patches: list[Literal[16, 8, 4, 2, 1]] = Field(
        [16, 8, 4, 2], min_length=2, max_length=5, description="Patch sizes of the variant sweep."
    )

    @model_validator(mode="after")
    def _fits(self) -> SweepParams:
        if any(p > self.image_size for p in self.patches):
            raise ValueError("every patch size must be <= image_size")
        if self.variant_size and any(p > self.variant_size for p in self.variant_patches):
            raise ValueError("every variant patch size must be <= variant_size")
        self.patches = sorted(set(self.patches), reverse=True)
        self.backbones = list(dict.fromkeys(self.backbones))
        return self


@register_method("patch_scaling.sweep", title="Patch scaling: accuracy vs patch size", queue="cpu")
def run_sweep(params: SweepParams, progress: JobContext) -> Report:
    """Train every (backbone, p, seed) (as sub-jobs when a worker runs); curve, table and the §7.5 checks."""
    from methods.patch_scaling.experiment import run_reproduction

    return run_reproduction(params, progress)


class Options(ReproducerOptions, SweepParams):
    PRESETS = PRESETS
    preset: Literal["quick", "mid", "long", "two_sizes", "spec", "spec16"] = Field(
        "quick",
        description="quick (1 seed, 4 epochs, ~10 min CPU), mid (5 seeds, 6 epochs, ~55 min), "
        "long (3 seeds, 30 epochs + p = 8 and 1 at 100 epochs, ~1 h of one core), two_sizes (Tiny-Adventurer, 3 seeds, "
        "12 epochs at 8×8 and at 16×16 with p = 16..2, ~35 min), spec (5 seeds, 100 epochs), spec16 (16×16).",
    )


@register_reproducer("patch_scaling", options=Options, description="Scaling laws in patchification on digits (p→1)")
def reproduce(options: Options, progress: JobContext) -> Report:
    """Accuracy ± std, FLOPs and wall-clock per p and backbone, the scaling plot and the §7 checks."""
    from methods.patch_scaling.experiment import run_reproduction

    return run_reproduction(options, progress)
