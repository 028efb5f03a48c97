"""Registered job ``gmail.align`` (one strength and seed: stage 1, stage 2 arms, captioning, the gap) and
the reproducer ``gmail`` (strengths × seeds, spec §7 checks, docs/results/gmail.md).

Queue ``cpu``: the tiny CLIP's towers are milliseconds per batch; one experiment is minutes on a core.
Both take ``device`` (cpu | auto | cuda) and ``amp`` (off | bf16): the backbone, the pairs and every
trained model live there; reports record the device, dtype and GPU name.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field, field_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.provenance import provenance_line
from methods.gmail.config import PRESETS, GmailConfig


class AlignParams(GmailConfig, DeviceParams):
    """One GMAIL experiment (see :class:`methods.gmail.config.GmailConfig`), its device and its thread count."""

    threads: int = Field(1, ge=1, le=64, description="torch threads.")


def _config(params, **over) -> GmailConfig:
    fields = {k: getattr(params, k) for k in GmailConfig.model_fields if hasattr(params, k)}
    return GmailConfig(**{**fields, **over})


@register_method(
    "gmail.align", title="GMAIL: align generated images to real ones", queue="cpu",
    tags=("vision-language", "generated-data", "lora"),
)  # fmt: skip
def run_align(params: AlignParams, progress: JobContext) -> Report:
    """Stage 1 (f_g: LoRA + Proj for Gen aligned to frozen f_r with L_align + μ·L_CLIP), stage 2 on real / naive / dual / GMAIL, and the real-vs-generated embedding map at one artifact strength."""
    from core.device import device_provenance, resolve_device
    from core.train import pin_threads
    from methods.gmail.experiment import get_backbone, prepare, run_seed
    from methods.gmail.report import align_report

    dev = resolve_device(params.device)
    cfg = _config(params)
    with pin_threads(params.threads):
        backbone = get_backbone(cfg.backbone, progress=progress.sub(0.0, 0.2))
        progress(0.2, "rendering the real/generated pairs")
        prep = prepare(cfg, backbone, progress=progress.sub(0.2, 0.3), device=dev)
        result = run_seed(prep, cfg, progress=progress.sub(0.3, 0.98), amp=params.amp)
    report = align_report(params.model_dump(), result)
    report.metrics.update(device_provenance(dev, params.amp))
    return report


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
    from core.device import device_provenance, resolve_device
    from core.train import pin_threads
    from methods.gmail.checks import check_align_loss, check_asymmetry, check_lora_identity, check_router
    from methods.gmail.data import load_pairs
    from methods.gmail.experiment import get_backbone, prepare, run_seed
    from methods.gmail.plots import pair_grid
    from methods.gmail.report import aggregate, directional_checks, reproduction_report
    from methods.gmail.text import reading, shrunk

    start = time.perf_counter()
    dev = resolve_device(options.device)
    strengths = list(options.strengths)
    runs: list[list[dict]] = []
    with pin_threads(options.threads):
        backbone = get_backbone(options.backbone, progress=progress.sub(0.0, 0.05))
        n_jobs = len(strengths) * options.seeds
        for si, s in enumerate(strengths):
            cfg0 = _config(options, artifact_strength=s, seed=0, rank=4)
            prep = prepare(cfg0, backbone, device=dev)
            if si == 0:
                x = prep.test.gen[:32]
                mech = [
                    ("§7.1 L_align = log|B| for equal similarities, → 0 for one-to-one matches", *check_align_loss()),
                    ("§7.2 asymmetry: only f_g's LoRA / Proj for Gen receive gradients; f_r bit-identical",
                     *check_asymmetry(backbone, x, prep.real_emb_train[:32])),
                    ("§7.3 LoRA: zero B ⇒ f_g ≡ f_r at step 0; count = Σ r·(d_in+d_out)", *check_lora_identity(backbone, x)),
                    ("§7.4 router: real images never pass through f_g with real_inference_encoder='original'",
                     *check_router(backbone, prep.test.real[:8])),
                ]  # fmt: skip
            per_seed = []
            for seed in range(options.seeds):
                k = si * options.seeds + seed
                sub = progress.sub(0.05 + 0.93 * k / n_jobs, 0.05 + 0.93 * (k + 1) / n_jobs)
                per_seed.append(
                    run_seed(prep, _config(options, artifact_strength=s, seed=seed), progress=sub, amp=options.amp)
                )
            runs.append(per_seed)
    vc = backbone.model.config.vision_config
    info = {
        "backbone": f"tiny CLIP '{options.backbone}'",
        "arch": f"ViT {vc.num_hidden_layers} layers × {vc.hidden_size} wide, {vc.image_size} px, patch {vc.patch_size}, "
        f"{backbone.model.config.projection_dim}-d embedding",
        "seconds": round(time.perf_counter() - start, 1),
        "machine": provenance_line(dev, options.amp, threads=options.threads),
        "command": f"paperworks reproduce gmail{options.cli_options()}",
    }
    report = reproduction_report(options.model_dump(), strengths, runs, mech, info)
    report.metrics.update(device_provenance(dev, options.amp))
    test = load_pairs("test", options.n_test, strengths[0], generator=options.generator)
    gens = [(f"gen s={s}", load_pairs("test", options.n_test, s, generator=options.generator).gen) for s in strengths]
    report.add_figure("pairs.png", pair_grid(test.real, gens, test.specific_captions()),
                      caption="Held-out pairs: the real render (top) and the generator's image at each strength")  # fmt: skip
    aggs = [aggregate(r) for r in runs]
    report.add_section("Command", f"`{info['command']}` — {info['seconds']} s. {info['machine']}")
    report.add_section("What was shrunk", shrunk(options.model_dump(), info))
    report.add_section("Reading", reading(strengths, aggs, mech + directional_checks(strengths, aggs)))
    return report
