"""Registered jobs ``rf.edit`` and ``rf.reconstruct`` and the reproducer ``rf_solver``.

Queue: both jobs are registered on the ``cpu`` queue. The model is a ~1M-parameter DiT
on 16×16 or 32×32 images: an N = 15 edit is tens to hundreds of milliseconds of CPU
compute, the V cache lives in CPU memory as the spec prescribes, and the default
deployment (``paperworks up``) runs only a ``cpu`` worker. ``device=cuda`` runs a job on a
GPU worker (routed to the ``gpu`` queue): there the model trains (when not cached) and the
inversion and sampling run; at this size a GPU gains little, a large RF model (FLUX-size)
behind an adapter would.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.ownership import owned


class ImageRef(DeviceParams):
    """Exactly one image reference (and where the model runs)."""

    image_sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 of an uploaded image in the artifact store (the key's own upload).",
        json_schema_extra=owned("upload"),
    )
    digit_index: int | None = Field(None, ge=0, le=296, description="Index into the 297 held-out digits.")
    example: Literal["boy.jpg", "hiking.jpg", "horse.jpg"] | None = Field(
        None, description="A shared example photo (rf_edit_examples)."
    )
    model: Literal["auto", "digits", "photo", "tiny"] = Field(
        "auto",
        description="Which trained RF model to use (tiny: a small digits model trained in seconds, for a first try).",
    )
    shift: bool = Field(True, description="FLUX-dev schedule shift (off = flux-schnell linear grid).")

    @model_validator(mode="after")
    def _one_image(self) -> ImageRef:
        if sum(x is not None for x in (self.image_sha256, self.digit_index, self.example)) != 1:
            raise ValueError("give exactly one of image_sha256, digit_index, example")
        return self


class EditParams(ImageRef):
    source_label: str = Field("3", max_length=20, description='Label ("prompt") describing the source image.')
    target_label: str = Field("8", max_length=20, description="Label to edit towards.")
    steps: int = Field(15, ge=1, le=100, description="Timesteps N.")
    inject: int = Field(2, ge=0, le=100, description="Denoising steps k that receive the source V.")
    order: Literal[1, 2] = Field(2, description="1 = Euler (vanilla RF), 2 = RF-Solver-2.")
    guidance: float = Field(2.0, ge=1.0, le=10.0, description="Guidance of the target pass (inversion uses 1).")
    offload: bool = Field(False, description="Keep the V cache on disk instead of memory.")
    v_keys: Literal["interval", "eval"] = Field(
        "interval",
        description="Ablation: key V by the interval's upper time (spec §3.5) or by the time it was evaluated at.",
    )
    cfg_halves: Literal["both", "cond"] = Field(
        "both", description="Ablation: inject the source V into both guidance halves (spec) or the conditional only."
    )
    blocks: Literal["all", "later_half"] = Field(
        "all", description="Ablation: share V in every single-stream block (spec §6.2) or only the later half (FLUX)."
    )

    @model_validator(mode="after")
    def _inject_le_steps(self) -> EditParams:
        from methods.rf_solver.experiment import preset_for_labels

        if self.inject > self.steps:
            raise ValueError("inject must be <= steps")
        preset_for_labels(self.model, self.source_label, self.target_label)  # ValueError → 422
        return self


class ReconstructParams(ImageRef):
    label: str = Field("3", max_length=20, description="Label of the image (used for inversion and sampling).")
    nfes: list[int] = Field(
        [4, 10, 20, 50],
        min_length=1,
        max_length=8,
        description="Evaluations per direction (even): Euler uses NFE steps, RF-Solver-2 NFE/2.",
    )

    @model_validator(mode="after")
    def _even(self) -> ReconstructParams:
        from methods.rf_solver.experiment import preset_for_labels

        preset_for_labels(self.model, self.label)
        if any(n < 2 or n > 200 or n % 2 for n in self.nfes):
            raise ValueError("each NFE must be even and in [2, 200]")
        self.nfes = sorted(set(self.nfes))
        return self


def _image(params: ImageRef, preset: str):
    from methods.rf_solver.config import PRESETS
    from methods.rf_solver.experiment import resolve_image

    cfg = PRESETS[preset].model
    return resolve_image(
        image_sha256=params.image_sha256,
        digit_index=params.digit_index,
        example=params.example,
        size=cfg.image_size,
        channels=cfg.channels,
    )


@register_method("rf.edit", title="RF-Edit an image", queue="cpu", tags=("image", "rectified-flow"))
def run_edit(params: EditParams, progress: JobContext) -> Report:
    """Invert an image with RF-Solver under its source label and resample it under a target label, sharing V."""
    from methods.rf_solver.experiment import edit, preset_for_labels

    preset = preset_for_labels(params.model, params.source_label, params.target_label)
    return edit(
        _image(params, preset),
        preset,
        params.source_label,
        params.target_label,
        steps=params.steps,
        inject=params.inject,
        order=params.order,
        guidance=params.guidance,
        shift=params.shift,
        offload=params.offload,
        v_keys=params.v_keys,
        cfg_halves=params.cfg_halves,
        blocks=params.blocks,
        progress=progress,
        device=params.device,
        amp=params.amp,
    )


@register_method("rf.reconstruct", title="RF inversion + reconstruction", queue="cpu", tags=("image", "rectified-flow"))
def run_reconstruct(params: ReconstructParams, progress: JobContext) -> Report:
    """Invert and reconstruct an image at several NFE budgets, Euler vs RF-Solver-2 at equal NFE."""
    from methods.rf_solver.experiment import preset_for_labels, reconstruct

    preset = preset_for_labels(params.model, params.label)
    return reconstruct(
        _image(params, preset),
        preset,
        params.label,
        nfes=params.nfes,
        shift=params.shift,
        progress=progress,
        device=params.device,
        amp=params.amp,
    )


class RfSolverOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce rf_solver`` (``device``/``amp``: where the models train and solve)."""

    n_recon: int = Field(64, ge=1, le=297, description="Held-out digits reconstructed per solver and NFE.")
    n_edit: int = Field(50, ge=1, le=233, description="Held-out digits edited (after the reconstructed ones).")
    ablation: bool = Field(
        False,
        description="Also run the RF-Edit ablation grid here (it has its own reproducer: rf_solver_ablation).",
    )
    threads: int = Field(0, ge=0, le=256, description="torch threads (0 = torch's default).")
    digits_model: Literal["digits", "digits_long"] = Field(
        "digits_long",
        description="Digits model: 3,200 training steps (strong enough that k = 0 edits reach the target), or "
        "the 800-step model of the earlier runs. Either is trained once, then cached.",
    )

    @model_validator(mode="after")
    def _fits(self) -> RfSolverOptions:
        if self.n_recon + self.n_edit > 297:
            raise ValueError("n_recon + n_edit must be <= 297 (the held-out digits)")
        return self


@register_reproducer(
    "rf_solver",
    options=RfSolverOptions,
    description="RF-Solver: analytic orders, trained-model reconstruction, RF-Edit trade-off",
)
def reproduce(options: RfSolverOptions, progress: JobContext) -> Report:
    """Analytic error vs NFE, reconstruction MSE/PSNR/SSIM for N ∈ {5, 10, 25}, and the edit trade-off."""
    from methods.rf_solver.experiment import run_reproduction

    command = f"paperworks reproduce rf_solver{options.cli_options()}"
    return run_reproduction(progress, command=command, **options.model_dump())  # the options are its keywords


class RfSolverAblationOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce rf_solver_ablation`` (``device``/``amp`` as for ``rf_solver``)."""

    n_edit: int = Field(50, ge=1, le=233, description="Held-out digits edited per grid cell.")
    offset: int = Field(64, ge=0, le=296, description="First held-out digit (64 = the edits of `reproduce rf_solver`).")
    threads: int = Field(0, ge=0, le=256, description="torch threads (0 = torch's default).")
    preset: Literal["digits", "digits_long"] = Field(
        "digits_long",
        description="Digits model: the same recipe trained 3,200 steps (trained once, then cached), or the "
        "800-step model of the earlier runs.",
    )

    @model_validator(mode="after")
    def _fits(self) -> RfSolverAblationOptions:
        if self.offset + self.n_edit > 297:
            raise ValueError("offset + n_edit must be <= 297 (the held-out digits)")
        return self


@register_reproducer(
    "rf_solver_ablation",
    options=RfSolverAblationOptions,
    description="RF-Edit ablation grid: V keys × CFG handling × blocks, with intervals over the edits",
)
def reproduce_ablation(options: RfSolverAblationOptions, progress: JobContext) -> Report:
    """The 12-cell RF-Edit grid on the digits model: target accuracy and MSE to the source, factor effects."""
    from methods.rf_solver.experiment import run_ablation_reproduction

    command = f"paperworks reproduce rf_solver_ablation{options.cli_options()}"
    return run_ablation_reproduction(progress, command=command, **options.model_dump())  # the options: its keywords
