"""Registered jobs ``vlm.train`` (train/cache the tiny CLIP, report it) and ``vlm.zeroshot`` (classify one image).

Both are registered on the ``cpu`` queue: the tiny CLIP trains in minutes on one core and classifies
in milliseconds. Both take ``device`` / ``amp`` (:class:`core.device.DeviceParams`): the model is
trained, loaded and evaluated there, and the report records where (``device``, ``dtype``, ``gpu``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.ownership import owned

DatasetName = Literal["scenes", "objects", "objects20", "digits", "photos", "examples"]


class TrainParams(DeviceParams):
    preset: Literal["default", "test"] = Field(
        "default", description="Tiny-CLIP preset (test = seconds, for smoke runs)."
    )
    steps: int | None = Field(
        None, ge=10, le=20000, description="Override the preset's training steps (a new cache entry)."
    )
    retrain: bool = Field(False, description="Train again even when the cache holds this preset.")
    threads: int = Field(1, ge=1, le=64, description="torch threads for training.")


@register_method("vlm.train", title="Train the tiny CLIP", queue="cpu", tags=("vision-language", "clip"))
def run_train(params: TrainParams, progress: JobContext) -> Report:
    """Train (or load from the cache) the tiny CLIP on captioned scenes, digits and photo crops; report loss, zero-shot accuracy and retrieval."""
    from methods.vlm.experiment import train_one

    return train_one(params, progress)


class ZeroShotParams(DeviceParams):
    image_sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 of an uploaded image in the artifact store (the key's own upload).",
        json_schema_extra=owned("upload"),
    )
    dataset: DatasetName = Field(
        "objects", description="Dataset of the image when no upload is given; also the default classes."
    )
    split: Literal["train", "val", "test"] = Field("test", description="Split of the dataset image.")
    index: int = Field(0, ge=0, le=20000, description="Index of the dataset image.")
    classnames: list[str] = Field(
        [], max_length=100, description="Candidate class names (empty: the dataset's classes)."
    )
    template: str = Field("a photo of a {}.", min_length=3, max_length=100, description="Prompt template with one {}.")
    preset: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset.")

    @field_validator("classnames")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        v = [s.strip() for s in v if s.strip()]
        if any(len(s) > 60 for s in v):
            raise ValueError("class names must be at most 60 characters")
        if len(set(v)) != len(v):
            raise ValueError("class names must be distinct")
        if len(v) == 1:
            raise ValueError("give at least two class names (or none for the dataset's)")
        return v

    @model_validator(mode="after")
    def _template(self) -> ZeroShotParams:
        if self.template.count("{}") != 1:
            raise ValueError("template must contain exactly one {}")
        return self


@register_method("vlm.zeroshot", title="Zero-shot classify an image", queue="cpu", tags=("vision-language", "clip"))
def run_zeroshot(params: ZeroShotParams, progress: JobContext) -> Report:
    """Classify an uploaded or dataset image among class names with the tiny CLIP (softmax of logit_scale · cosine)."""
    from methods.vlm.experiment import zeroshot_one

    return zeroshot_one(params, progress)


class VlmOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce vlm``."""

    preset: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset.")
    retrain: bool = Field(False, description="Train again even when the cache holds this preset.")
    threads: int = Field(1, ge=1, le=64, description="torch threads for training.")


@register_reproducer(
    "vlm", options=VlmOptions, description="The tiny CLIP substrate: training curve, zero-shot accuracy, retrieval"
)
def reproduce(options: VlmOptions, progress: JobContext) -> Report:
    """Train (or load) the tiny CLIP and write its report as docs/results/vlm.md: zero-shot accuracy and retrieval
    against chance, per test item, as the page's headline claims."""
    from methods.vlm.experiment import reproduce as run

    return run(options, progress)
