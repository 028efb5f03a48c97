"""Registered jobs ``double_filter.patches`` and ``double_filter.experiment``, and the reproducer ``double_filter``.

Queue ``cpu``: the VLP has 0.46M parameters; the first call pretrains and caches it (a few minutes).
Both jobs and the reproducer take ``device`` (cpu | auto | cuda) and ``amp`` (off | bf16): pretraining,
patch scoring, fine-tuning and evaluation run there; reports record the device, dtype and GPU name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.double_filter.config import PRESETS

TaskName = Literal["vqa", "nlvr", "retrieval"]


class IPFParams(BaseModel):
    rho: float = Field(0.5, ge=0.05, le=1.0, description="Global keep ratio ρ (spec default 0.6; §7.5 uses 0.5).")
    r_fg: float = Field(0.8, ge=0.0, le=1.0, description="Share of foreground patches kept (r_fg).")
    tau: float = Field(0.5, gt=0.0, le=1.0, description="τ_ov: box coverage of a patch for it to be foreground.")
    score_layers: int = Field(1, ge=1, le=4, description="Vision blocks the importance scorer runs.")
    detector: Literal["components", "boxes"] = Field(
        "components", description="components: connected components on the image; boxes: the renderer's boxes."
    )


class PatchParams(IPFParams, DeviceParams):
    """Which test images to filter and show."""

    model_config = ConfigDict(extra="forbid")

    backbone: Literal["default", "test"] = Field("default", description="Pretrained VLP (test = tiny, for tests).")
    start: int = Field(0, ge=0, le=990, description="First test scene.")
    count: int = Field(6, ge=1, le=10, description="How many scenes.")


@register_method(
    "double_filter.patches", title="Double-Filter: kept patches (IPF)", queue="cpu", tags=("vision-language",)
)
def run_patches(params: PatchParams, progress: JobContext) -> Report:
    """Run the image patch filter on test scenes: foreground from the detector, importance from [CLS] attention; the kept patches overlaid on each image."""
    from core.device import device_provenance, resolve_device
    from core.train import pin_threads
    from methods.double_filter import ipf
    from methods.double_filter.plots import overlay
    from methods.double_filter.pretrain import get_pretrained
    from methods.double_filter.tasks import scenes

    dev = resolve_device(params.device)
    with pin_threads(1):
        model, _, _ = get_pretrained(params.backbone, progress=progress.sub(0.0, 0.8), device=dev, amp=params.amp)
        progress(0.85, "filtering patches")
        _, imgs, gt = scenes("test", params.start + params.count)
        images = imgs[params.start :]
        detector = ipf.make_detector(params.detector, model.cfg.image_size)
        boxes = ipf.detect_all(detector, images, gt[params.start :])
        keep, fgs = ipf.ipf_keep(model, images, boxes, params.rho, r_fg=params.r_fg, tau=params.tau,
                                 score_layers=params.score_layers)  # fmt: skip
    n = model.n_patches
    report = Report(
        title="IPF: kept patches",
        summary=f"{params.count} test scenes: kept {keep.shape[1]} of {n} patches each (ρ = {params.rho}), "
        f"detector: {detector.name}.",
    )
    fig = overlay(images.numpy(), keep.numpy(), fgs, boxes, model.cfg.patch_size,
                  [f"scene {params.start + i}" for i in range(params.count)])  # fmt: skip
    report.add_figure("kept_patches.png", fig, caption="left: image + detector boxes; right: kept patches")
    report.add_table(
        "Kept patches per scene",
        ["scene", "boxes", "foreground patches", "kept", "kept foreground", "kept background"],
        [
            [params.start + i, len(b), int(f.sum()), " ".join(map(str, k)), int(f[k].sum()), int((~f[k]).sum())]
            for i, (b, f, k) in enumerate(zip(boxes, fgs, keep.numpy(), strict=True))
        ],
    )
    report.data = {"keep": keep.tolist(), "foreground": [f.tolist() for f in fgs], "n_patches": n,
                   "boxes": [b.tolist() for b in boxes]}  # fmt: skip
    report.metrics["kept"] = int(keep.shape[1])
    report.metrics["patches"] = n
    report.metrics.update(device_provenance(dev, params.amp))
    return report


class ExperimentParams(IPFParams, DeviceParams):
    model_config = ConfigDict(extra="forbid")

    backbone: Literal["default", "test"] = Field("default", description="Pretrained VLP (test = tiny, for tests).")
    tasks: list[TaskName] = Field(["vqa", "nlvr", "retrieval"], min_length=1, max_length=3, description="Tasks.")
    seeds: int = Field(3, ge=1, le=10, description="Seeds 0..seeds-1 (fine-tuning, GA, random baselines).")
    steps: int = Field(120, ge=1, le=5000, description="Fine-tuning steps per arm.")
    batch_size: int = Field(48, ge=4, le=512, description="Fine-tuning batch size.")
    lr: float = Field(2e-3, gt=0, le=0.1, description="Fine-tuning learning rate (AdamW).")
    n_train: int = Field(2000, ge=32, le=20000, description="Training items per task.")
    n_val: int = Field(192, ge=16, le=2000, description="Validation items per task (GA fitness).")
    n_test: int = Field(400, ge=16, le=5000, description="Test items per task.")
    gamma: float = Field(0.1, ge=0.0, le=10.0, description="γ: FLOPs weight in the GA fitness.")
    population: int = Field(20, ge=4, le=200, description="GA population.")
    generations: int = Field(20, ge=1, le=500, description="GA generations (spec: 30).")
    max_drop: float = Field(0.5, gt=0.0, lt=1.0, description="At most ⌈max_drop·L⌉ sub-layers off.")
    directional: bool = Field(
        True, description="On VQA also run the §7.5 baselines (random / foreground-first patches, random mask)."
    )
    curve_points: int = Field(
        10,
        ge=0,
        le=100,
        description="Validation measurements during each fine-tuning (the convergence curve; 0: none).",
    )
    threads: int = Field(1, ge=1, le=64, description="torch threads.")

    @model_validator(mode="after")
    def _unique(self) -> ExperimentParams:
        self.tasks = list(dict.fromkeys(self.tasks))
        return self


@register_method(
    "double_filter.experiment", title="Double-Filter: accuracy vs FLOPs", queue="cpu", tags=("vision-language",)
)
def run_experiment(params: ExperimentParams, progress: JobContext) -> Report:
    """Fine-tune the tiny VLP per task with no filter, the patch filter, the GA layer filter and both; accuracy vs FLOPs/latency, the GA's fitness curve and the §7 checks."""
    from methods.double_filter.experiment import run_reproduction

    return run_reproduction(params, progress)


class Options(ReproducerOptions, ExperimentParams):
    PRESETS = PRESETS
    preset: Literal["quick", "default"] = Field(
        "default", description="quick (tests: tiny model, VQA, 1 seed), default (docs/results: 3 tasks × 3 seeds)."
    )


@register_reproducer("double_filter", options=Options, description="Double-Filter: patch & layer filtering of a VLP")
def reproduce(options: Options, progress: JobContext) -> Report:
    """Accuracy vs FLOPs/latency for no filter, IPF, ALF and both on synthetic VQA/NLVR/retrieval, ≥ 3 seeds, §7 checks."""
    from methods.double_filter.experiment import run_reproduction

    return run_reproduction(options, progress)
