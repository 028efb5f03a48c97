"""Jobs ``m3_jepa.train``, ``m3_jepa.study``, ``m3_jepa.retrieve`` and the reproducer ``m3_jepa``.

Queue ``cpu``: the predictors are ~0.5M parameters on precomputed frozen features. The caption
states of SmolLM2 are computed once per caption and cached in the vector store; the study fans its
(variant, seed) runs out as ``m3_jepa.train`` sub-jobs when a worker is configured, each with the
study's ``device`` and ``amp`` (so they are routed to the same queue). Every job takes ``device``
(cpu | auto | cuda) and ``amp`` (off | bf16); the predictor trains and evaluates there, the frozen
features are computed once on the CPU and moved. Reports record the device, dtype and GPU name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.m3_jepa.config import ALL_VARIANTS, PRESETS

Variant = Literal[
    "m3_jepa", "m3_jepa_sampled", "mlp", "k1", "k6", "no_cl", "no_reg", "summed", "clip_linear", "random_captions"
]


class TrainParams(DeviceParams):
    model_config = ConfigDict(extra="forbid")

    variant: Variant = Field("m3_jepa", description="Which model / ablation (see GET /v1/m3_jepa/variants).")
    seed: int = Field(0, ge=0, le=10_000, description="Seed of the init, batch order and task sampling.")
    epochs: int = Field(50, ge=1, le=500, description="Training epochs (spec §6: 50).")
    patience: int = Field(10, ge=0, le=100, description="Early stopping on the mean validation recall (0 = off).")


@register_method("m3_jepa.train", title="M3-JEPA: train one variant on digits ↔ captions", queue="cpu")
def run_train(params: TrainParams, progress: JobContext) -> Report:
    """Train the MoE predictor (or an ablation) with AGD; test R@1/5/10 both ways, zero-shot accuracy, expert usage."""
    from core.device import device_provenance, resolve_device
    from methods.m3_jepa.experiment import train_variant
    from methods.m3_jepa.report import train_report

    dev = resolve_device(params.device)
    result = train_variant(
        params.variant, params.seed, params.epochs, params.patience, progress=progress, device=dev, amp=params.amp
    )
    report = train_report(result)
    report.metrics.update(device_provenance(dev, params.amp))
    return report


class StudyParams(DeviceParams):
    model_config = ConfigDict(extra="forbid")

    variants: list[Variant] = Field(ALL_VARIANTS, min_length=1, max_length=10, description="Variants to compare.")
    seeds: int = Field(3, ge=1, le=10, description="Seeds per variant (the issue asks ≥ 3).")
    epochs: int = Field(50, ge=1, le=500, description="Training epochs per run.")
    patience: int = Field(10, ge=0, le=100, description="Early stopping patience (0 = off).")
    dispatch: Literal["auto", "jobs", "inline"] = Field(
        "auto", description="auto: sub-jobs when a worker is configured, else in this process."
    )
    long_epochs: int = Field(
        0, ge=0, le=500, description="Also train long_variants at this many epochs (0: no long-budget arms)."
    )
    long_variants: list[Variant] = Field(
        ["m3_jepa", "clip_linear"], max_length=10, description="Variants of the long-budget arms."
    )

    @field_validator("variants", "long_variants")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))


@register_method("m3_jepa.study", title="M3-JEPA: variants × seeds with the §7 checks", queue="cpu")
def run_study(params: StudyParams, progress: JobContext) -> Report:
    """Every (variant, seed): retrieval mean ± std, zero-shot, expert usage, ablation directions and §7 checks."""
    from methods.m3_jepa.experiment import run_study

    return run_study(params, progress)


class RetrieveParams(DeviceParams):
    model_config = ConfigDict(extra="forbid")

    caption: str = Field(
        ..., min_length=1, max_length=200, description="A caption, e.g. 'a bold seven leaning to the left'."
    )
    k: int = Field(8, ge=1, le=32, description="How many test digits to return.")
    variant: Variant = Field("m3_jepa", description="Which trained model answers.")
    seed: int = Field(0, ge=0, le=10_000, description="Seed of the model (trained once and cached).")
    epochs: int = Field(
        25,
        ge=1,
        le=500,
        description="Training epochs of that model (25 = the reproduction's, whose weights are cached).",
    )

    @field_validator("caption")
    @classmethod
    def _strip(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("caption must not be blank")
        return v


@register_method("m3_jepa.retrieve", title="M3-JEPA: type a caption, see the nearest digits", queue="cpu")
def run_retrieve(params: RetrieveParams, progress: JobContext) -> Report:
    """t→i retrieval over the 597 test digits with a cached trained model; the caption's expert routing."""
    from core.device import device_provenance, resolve_device
    from methods.m3_jepa.experiment import retrieve
    from methods.m3_jepa.report import retrieve_report

    dev = resolve_device(params.device)
    result = retrieve(
        params.caption, params.k, params.variant, params.seed, params.epochs, progress, device=dev, amp=params.amp
    )
    report = retrieve_report(result)
    report.metrics.update(device_provenance(dev, params.amp))
    return report


class Options(ReproducerOptions, StudyParams):
    PRESETS = PRESETS
    preset: Literal["quick", "spec", "smoke", "stored"] = Field(
        "quick",
        description="quick (all variants × 3 seeds, 25 epochs; M3-JEPA and CLIP-linear also at 100), spec (50 epochs), "
        "smoke (1 seed, 3 epochs), stored (the results doc rebuilt from docs/results/m3_jepa/runs.json: no training).",
    )


@register_reproducer(
    "m3_jepa", options=Options, description="M3-JEPA (ICML 2025): MoE predictor + AGD, digits ↔ captions"
)
def reproduce(options: Options, progress: JobContext) -> Report:
    """All variants × seeds (+ the long-budget arms), the headline claims, the paper's claims beside ours, the §7 checks."""
    from methods.m3_jepa.experiment import run_study

    return run_study(options, progress)
