"""Registrations: the ``sefe.run`` job (any arms/seeds/sizes) and ``paperworks reproduce sefe``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field

from core.device import DeviceParams, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.sefe.config import SefeConfig


class RunParams(SefeConfig, DeviceParams):
    """A SEFE experiment (spec §6). Defaults are the spec's caps; heavy on a CPU — use small sizes.

    ``device``/``amp``: where SmolLM2 and its LoRA train and answer (cached stages do not depend on it).
    """

    tasks: tuple[Literal["iris", "cancer", "wine", "digits"], ...] = Field(
        ("iris", "cancer"), min_length=2, max_length=4, description="Task order."
    )
    adapt_layers: int | None = Field(4, ge=1, le=30, description="LoRA on the top k of 30 layers (None: all).")
    n_train: int = Field(32, ge=4, le=600, description="Training examples per task (spec cap 600).")
    n_test: int = Field(20, ge=2, le=150, description="Test items per task (spec cap 150).")
    alpha: float = Field(128.0, gt=0, le=4096, description="LoRA α (α/r = 16 learns in a few dozen steps).")
    epochs: int = Field(2, ge=1, le=10, description="Epochs per task.")
    lr: float = Field(1e-3, gt=0, le=1e-2, description="Peak learning rate (cosine, 3 % warm-up).")
    batch_size: int = Field(4, ge=1, le=64)
    seeds: tuple[int, ...] = Field((0,), min_length=1, max_length=5, description="Seeds.")
    arms: tuple[Literal["seq", "asd", "reglora", "sefe", "multitask"], ...] = Field(
        ("seq", "sefe"), min_length=1, description="Arms to run."
    )
    cache: bool = Field(
        True,
        description="Reuse stages (adapters, answers) cached by earlier runs with the same settings; "
        "false recomputes every stage of this run (stages shared by its arms are still trained once).",
    )


@register_method("sefe.run", title="SEFE: continual instruction tuning with ASD and RegLoRA", queue="cpu")
def run(params: RunParams, progress: JobContext) -> Report:
    """Sequential LoRA / ASD / RegLoRA / SEFE / multitask on scikit-learn instruction tasks (SmolLM2-135M):
    accuracy and format-compliance matrices, superficial vs essential forgetting."""
    from methods.sefe.experiment import run_sefe

    dev = resolve_device(params.device)
    cfg = SefeConfig(**params.model_dump(exclude={"device", "amp", "cache"}))
    if params.cache:
        return run_sefe(cfg, progress, device=dev, amp=params.amp)
    with tempfile.TemporaryDirectory(prefix="sefe-run-") as tmp:
        return run_sefe(cfg, progress, device=dev, amp=params.amp, cache_dir=Path(tmp))


class SefeOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce sefe`` (a preset fills the fields left unset)."""

    PRESETS = {"cpu": {}, "cpu-small": {}, "tiny": {}, "spec": {}, "stored": {}}
    preset: Literal["cpu", "cpu-small", "tiny", "spec", "stored"] = Field(
        "cpu",
        description="cpu (docs/results: 5 seeds of 4 arms, λ sweep and multitask on seed 0, top-8 layers, hours), "
        "cpu-small (top-4 layers, 32 examples: tasks not learned), tiny (smoke), spec (§6 caps, all 30 layers, many "
        "hours), stored (the results doc rebuilt from docs/results/sefe/runs.json: no training).",
    )
    seeds: int | None = Field(None, ge=1, le=10, description="Seeds 0..seeds-1 (default: the preset's).")
    threads: int = Field(1, ge=1, le=16, description="torch threads.")


@register_reproducer(
    "sefe",
    options=SefeOptions,
    description="SEFE on iris → cancer → wine → digits: sequential LoRA, ASD, RegLoRA, SEFE (5 seeds, paired), multitask.",
)
def reproduce(options: SefeOptions, progress: JobContext) -> Report:
    """The spec §6 experiment at the preset's size; the registry writes ``sefe.md`` (+ ``sefe/`` figures, JSON)."""
    from methods.sefe.experiment import reproduce_report

    return reproduce_report(options, progress)
