"""Registered jobs ``fourier_mamba.train`` and ``fourier_mamba.derain`` and the reproducer ``fourier_mamba``.

Queues: both jobs are registered on ``cpu`` and routed like every job by their ``device`` param
(:mod:`core.jobs.routing`): ``device=cuda`` (or ``auto`` where the deployment declares GPU workers) goes
to the ``gpu`` queue, where training gains most (the selective scan runs as the Triton kernel). Deraining
is one forward pass of a 0.3M-parameter network. Both take ``device``/``amp``
(:class:`core.device.DeviceParams`): the training, and the derain pass (and its training when no model is
cached), run there. The job bodies and the reproduction are in :mod:`methods.fourier_mamba.experiment`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.ownership import owned
from methods.fourier_mamba.config import PRESETS

PresetName = Literal["cpu", "spec", "tiny"]
Order = Literal["zigzag", "chebyshev", "raster"]


class TrainParams(DeviceParams):
    preset: PresetName = Field("cpu", description="Model + training recipe (config.py): cpu, spec (§6) or tiny.")
    scan_order: Order = Field("zigzag", description="Spectrum scan order (zigzag is the paper's; raster ablates it).")
    steps: int | None = Field(None, ge=1, le=100_000, description="Override the preset's training steps.")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Seed of the rain, the crops and the initialisation.")


@register_method("fourier_mamba.train", title="Train FourierMamba (deraining)", queue="cpu", tags=("image", "mamba"))
def run_train(params: TrainParams, progress: JobContext) -> Report:
    """Train FourierMamba-Tiny on synthetic rain over real photos and cache it for the derain job."""
    from methods.fourier_mamba.experiment import checkpoint_path, train_and_save
    from methods.fourier_mamba.model import count_params

    dev = resolve_device(params.device)
    overrides = {"seed": params.seed, "amp": params.amp} | ({"steps": params.steps} if params.steps else {})
    result = train_and_save(params.preset, params.scan_order, progress, device=dev, **overrides)
    report = Report(
        title=f"FourierMamba trained ({params.preset}, {params.scan_order})",
        summary=f"{len(result.losses)} steps in {result.seconds:.0f} s; final loss {result.losses[-1]:.4f}.",
    )
    report.metrics.update(
        {
            "steps": len(result.losses),
            "seconds": round(result.seconds, 1),
            "first_loss": result.losses[0],
            "final_loss": result.losses[-1],
            "params": count_params(result.model),
            **device_provenance(dev, params.amp),
        }
    )
    report.data = {"checkpoint": str(checkpoint_path(params.preset, params.scan_order)), "losses": result.losses}
    return report


class DerainParams(DeviceParams):
    image_sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 of an uploaded image in the artifact store (the key's own upload).",
        json_schema_extra=owned("upload"),
    )
    sample: Literal["rain100l_1", "rain100l_2", "rain100l_3", "china", "flower"] | None = Field(
        None, description="A sample: a real Rain100L rainy image (with its ground truth) or a clean photo."
    )
    add_rain: Literal["L", "H"] | None = Field(
        None, description="Add synthetic rain (L light, H heavy) first; the clean image becomes the ground truth."
    )
    rain_seed: int = Field(0, ge=0, le=2**31 - 1, description="Seed of the synthetic rain.")
    preset: PresetName = Field("cpu", description="Which trained model (trained on first use).")
    scan_order: Order = Field("zigzag", description="Scan order of the model.")

    @model_validator(mode="after")
    def _one_image(self) -> DerainParams:
        if (self.image_sha256 is None) == (self.sample is None):
            raise ValueError("give exactly one of image_sha256, sample")
        return self


@register_method("fourier_mamba.derain", title="FourierMamba: derain an image", queue="cpu", tags=("image", "mamba"))
def run_derain(params: DerainParams, progress: JobContext) -> Report:
    """Derain an uploaded or sample image (optionally with synthetic rain added); PSNR/SSIM on Y when there is a ground truth."""
    from methods.fourier_mamba.experiment import derain

    return derain(
        image_sha256=params.image_sha256,
        sample=params.sample,
        add_rain_kind=params.add_rain,
        rain_seed=params.rain_seed,
        preset=params.preset,
        scan_order=params.scan_order,
        progress=progress,
        device=params.device,
        amp=params.amp,
    )


class FourierMambaOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce fourier_mamba`` (``device``/``amp``: where the models train)."""

    PRESETS = {
        "cpu": {"steps": PRESETS["cpu"].train.steps, "n_eval": 48, "eval_crop": 64, "threads": 1, "seeds": 3},
        "spec": {"steps": PRESETS["spec"].train.steps, "n_eval": 96, "eval_crop": 64, "threads": 0, "seeds": 3},
        "tiny": {
            "steps": PRESETS["tiny"].train.steps,
            "n_eval": 4,
            "eval_crop": 16,
            "threads": 1,
            "real_max_side": 64,
            "seeds": 2,
        },
    }
    preset: PresetName = Field("cpu", description="cpu (default, minutes), spec (§6 scale) or tiny (tests).")
    steps: int = Field(150, ge=1, le=100_000, description="Training steps per model.")
    n_eval: int = Field(48, ge=2, le=2000, description="Held-out synthetic crops evaluated.")
    eval_crop: int = Field(64, ge=16, le=256, description="Side of the held-out crops (a multiple of 4).")
    ablation: bool = Field(True, description="Also train the raster-scan model (zigzag vs raster).")
    seeds: int = Field(
        3, ge=1, le=20, description="Training seeds per scan order (initialisation and crops; the data is fixed)."
    )
    real_max_side: int = Field(
        0,
        ge=0,
        le=4096,
        description="Downscale the real Rain100L pairs to this longest side (0 = full size, the spec).",
    )
    threads: int = Field(1, ge=0, le=256, description="torch threads while training (0 = torch's default).")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Seed of data, crops and initialisation.")

    @model_validator(mode="after")
    def _multiple(self) -> FourierMambaOptions:
        m = PRESETS[self.preset].model.multiple
        if self.eval_crop % m:
            raise ValueError(f"eval_crop must be a multiple of {m}")
        return self


@register_reproducer(
    "fourier_mamba",
    options=FourierMambaOptions,
    description="FourierMamba deraining: synthetic held-out crops, real Rain100L pairs, zigzag vs raster",
)
def reproduce(options: FourierMambaOptions, progress: JobContext) -> Report:
    """Train FourierMamba-Tiny (zigzag and raster) for several seeds; PSNR/SSIM(Y) per crop and pair; headlines."""
    from methods.fourier_mamba.config import get_preset
    from methods.fourier_mamba.experiment import run_reproduction

    preset = get_preset(options.preset).with_train(
        steps=options.steps, threads=options.threads, seed=options.seed, device=options.device, amp=options.amp
    )
    return run_reproduction(
        preset,
        seeds=options.seeds,
        command=f"paperworks reproduce fourier_mamba{options.cli_options()}",
        n_eval=options.n_eval,
        eval_crop=options.eval_crop,
        ablation=options.ablation,
        real_max_side=options.real_max_side,
        progress=progress,
    )
