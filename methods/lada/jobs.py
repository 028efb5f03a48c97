"""Registrations: the X-TAIL learners (``lada`` + baselines), the job ``lada.xtail`` and ``reproduce lada``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.continual.learner import ContinualLearner, register_learner
from methods.lada.config import (
    FINETUNE_PRESETS,
    LADA_PRESETS,
    FinetuneConfig,
    LadaConfig,
    RailConfig,
    ZeroShotConfig,
)

DOMAINS = ("colours", "digits", "objects", "shapes", "textures")
XTAIL_METHODS = ("lada", "xtail_zeroshot", "xtail_finetune", "xtail_lwf", "xtail_rail")


def _xtail(stream) -> None:
    from methods.continual.xtail import XTailStream

    if not isinstance(stream, XTailStream):
        raise TypeError("X-TAIL learners run on X-TAIL streams (job lada.xtail), not on class-incremental TaskStreams")


@register_learner(
    "lada",
    protocol="xtail",
    options=LadaConfig,
    heads=("lada", "text"),
    presets=LADA_PRESETS,
    description="LADA (ICML 2025): frozen CLIP image encoder, label-specific memory units from k-means, "
    "text AdaptFormer, GMM prototype distillation; X-TAIL union-label inference. Heads: lada, text (no memory term).",
)
def make_lada(options: LadaConfig, *, seed: int, stream) -> ContinualLearner:
    """A LADA learner over ``stream``'s union label space."""
    from methods.lada.learner import LadaLearner

    _xtail(stream)
    return LadaLearner(options, seed=seed, stream=stream)


@register_learner(
    "xtail_zeroshot",
    protocol="xtail",
    options=ZeroShotConfig,
    heads=("zeroshot",),
    description="Zero-shot CLIP over the X-TAIL union.",
)
def make_zeroshot(options: ZeroShotConfig, *, seed: int, stream) -> ContinualLearner:
    """Zero-shot CLIP (never trains)."""
    from methods.lada.baselines import ZeroShotLearner

    _xtail(stream)
    return ZeroShotLearner(options, seed=seed, stream=stream)


@register_learner(
    "xtail_finetune",
    protocol="xtail", options=FinetuneConfig, heads=("finetune",), presets=FINETUNE_PRESETS,
    description="Sequential fine-tuning of the whole CLIP on each X-TAIL domain.",
)  # fmt: skip
def make_finetune(options: FinetuneConfig, *, seed: int, stream) -> ContinualLearner:
    """Full fine-tuning (kd_lambda = 0)."""
    from methods.lada.baselines import FinetuneLearner

    _xtail(stream)
    return FinetuneLearner(options, seed=seed, stream=stream)


class LwfConfig(FinetuneConfig):
    kd_lambda: float = Field(1.0, gt=0, le=1000, description="LwF: weight of KD on the old model's seen-class logits.")


@register_learner(
    "xtail_lwf",
    protocol="xtail", options=LwfConfig, heads=("finetune",), presets={k: dict(v, kd_lambda=1.0) for k, v in FINETUNE_PRESETS.items()},
    description="LwF: full CLIP fine-tuning + distillation of the previous model's old-class logits.",
)  # fmt: skip
def make_lwf(options: LwfConfig, *, seed: int, stream) -> ContinualLearner:
    """LwF-style distillation on top of full fine-tuning."""
    from methods.lada.baselines import FinetuneLearner

    _xtail(stream)
    return FinetuneLearner(options, seed=seed, stream=stream)


@register_learner(
    "xtail_rail",
    protocol="xtail", options=RailConfig, heads=("rail",),
    description="Primal-RAIL: random ReLU expansion + closed-form ridge adapter, zero-shot domain selector.",
)  # fmt: skip
def make_rail(options: RailConfig, *, seed: int, stream) -> ContinualLearner:
    """Primal-RAIL adapter baseline."""
    from methods.lada.baselines import RailLearner

    _xtail(stream)
    return RailLearner(options, seed=seed, stream=stream)


class XTailParams(DeviceParams):
    """One X-TAIL run of a registered learner on the synthetic cross-domain stream (on ``device``, in ``amp``)."""

    model_config = ConfigDict(extra="forbid")

    method: Literal[XTAIL_METHODS] = Field("lada", description="lada or a baseline (zero-shot, fine-tune, LwF, RAIL).")
    backbone: Literal["default", "test"] = Field(
        "default", description="Tiny-CLIP preset (test = seconds, smoke runs)."
    )
    domains: list[Literal[DOMAINS]] = Field(
        list(DOMAINS), min_length=2, max_length=5, description="Domains in training order (order I: alphabetical)."
    )
    shots: int = Field(16, ge=1, le=48, description="Training images per class (X-TAIL: 16-shot).")
    seeds: int = Field(1, ge=1, le=10, description="Seeds (shots subsample, init, prototype noise).")
    first_seed: int = Field(0, ge=0, le=2**31 - 1, description="Seeds are first_seed, first_seed+1, ...")
    preset: Literal["spec", "cpu", "quick"] | None = Field(
        "cpu", description="Named option set of the method (where it has one); options override it."
    )
    options: dict[str, Any] = Field(default_factory=dict, description="The method's own options.")
    threads: int = Field(1, ge=1, le=64, description="torch threads.")

    @field_validator("domains")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("domains must not repeat")
        return v

    @model_validator(mode="after")
    def _options(self) -> XTailParams:
        from methods.continual.learner import get_learner

        get_learner(self.method).validate_options(self.resolved_options())
        return self

    def resolved_options(self) -> dict[str, Any]:
        from methods.continual.learner import get_learner

        base = dict(get_learner(self.method).presets.get(self.preset or "", {}))
        return {**base, **self.options}


@register_method(
    "lada.xtail",
    title="LADA / X-TAIL run",
    description="Learn the synthetic cross-domain stream (colours, digits, objects, shapes, textures) one domain "
    "at a time and classify every domain over the union label space after each: accuracy matrix, "
    "Transfer / Average / Last (and the per-task MTIL variant).",
    queue="cpu",
    tags=("continual", "vision-language"),
)
def run(params: XTailParams, progress: JobContext) -> Report:
    """Run ``params.method`` over the seeds and report the X-TAIL matrix and metrics."""
    from core.device import device_provenance, resolve_device
    from methods.continual.harness import seed_list
    from methods.continual.xtail import run_xtail_experiment
    from methods.lada.experiment import stream_factory
    from methods.lada.report import run_report

    dev = resolve_device(params.device)  # a cuda job on a worker without CUDA fails here, at once
    progress(0.0, "loading the tiny CLIP and the domains' features")
    make = stream_factory(params.backbone, shots=params.shots, domains=params.domains, device=dev, amp=params.amp)
    exp = run_xtail_experiment(
        params.method, seeds=seed_list(params.seeds, params.first_seed), make_stream=make,
        options=params.resolved_options(), threads=params.threads, progress=progress.sub(0.05, 0.97),
    )  # fmt: skip
    report = run_report(exp, params.model_dump(mode="json"))
    report.metrics.update(device_provenance(dev, params.amp))
    progress(1.0, "done")
    return report


class LadaOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce lada``."""

    PRESETS = {"cpu": {"seeds": 10, "backbone": "default"}, "smoke": {"seeds": 2, "backbone": "test", "shots": 4}}
    preset: Literal["cpu", "smoke"] = Field(
        "cpu", description="cpu (the results: 10 seeds) or smoke (tests: test CLIP, 2 seeds)."
    )
    seeds: int = Field(3, ge=1, le=10, description="Seeds 0..seeds-1.")
    shots: int = Field(16, ge=1, le=48, description="Training images per class.")
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset.")
    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_reproducer(
    "lada",
    options=LadaOptions,
    description="LADA on the synthetic 5-domain X-TAIL stream (16-shot, union label space): zero-shot, fine-tune, "
    "LwF, Primal-RAIL, BF, BF+DPT, no-prototype ablation and LADA over 10 seeds; Transfer/Average/Last; §7 checks.",
)
def reproduce(options: LadaOptions, progress: JobContext) -> Report:
    """Run every arm and the §7 checks; the registry writes ``lada.md`` (+ ``lada/`` figures and JSON)."""
    from methods.lada.experiment import run_reproduction

    return run_reproduction(options, progress)
