"""any4 jobs: ``any4.quantize``, ``any4.evaluate`` and the reproducer ``any4``.

Queues: both jobs are registered on ``cpu``, a fixed value, so every host (API, CLI, workers,
with or without CUDA) lists the same methods on the same queues. Where a job runs is decided at
submission from its params' ``device`` (:mod:`core.jobs.routing`): ``cuda``, and ``auto`` where
the deployment declares GPU workers (``PAPERWORKS_GPU_WORKERS=1``), go to the ``gpu`` queue, which
a GPU worker consumes alone (``paperworks worker --queues gpu``; a GPU host does not take ``cpu``
work: docs/GPU.md). Both jobs take ``device``/``amp`` (:class:`core.device.DeviceParams`, default
``cpu``); the k-means always runs on the CPU; the quantized model is evaluated through the Triton
kernel where the job runs on CUDA, and the clean model trains there when it is not cached.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from core.config import get_settings
from core.device import DeviceParams as Params
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.ownership import owned
from methods.any4.config import DEFAULT_VARIANTS

log = logging.getLogger(__name__)

_CKPT_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,119}$")


class QuantizeParams(Params):
    model: Literal["clean-llama", "smollm2-135m-instruct"] = Field(
        "clean-llama", description="clean-llama (trained from scratch in fp32) or SmolLM2 (pre-quantized GGUF)."
    )
    fmt: Literal["int4", "int3", "int2", "nf4", "fp4", "any4", "any3", "any2"] = Field("any4", description="Format.")
    group_size: Literal[32, 64, 128] = Field(64, description="g along K (must divide every K of the model).")
    calibration: Literal["none", "offline", "online"] = Field("offline", description="any-formats' sample weights.")
    init: Literal["kmeans++", "random", "int", "nf4"] = Field("kmeans++", description="k-means initialization.")
    eval_windows: int = Field(4, ge=1, le=64, description="WikiText-2 windows to score.")
    seqlen: int = Field(256, ge=32, le=2048, description="Tokens per window.")
    inspect_layer: str | None = Field(
        None,
        max_length=200,
        pattern=r"^[A-Za-z0-9_.]*$",
        description="Layer whose row LUTs are returned (default: a middle MLP).",
    )
    save_checkpoint: bool = Field(True, description="Save the quantized model for any4.evaluate.")


class EvaluateParams(Params):
    checkpoint: str = Field(
        ...,
        description="Checkpoint id returned by any4.quantize (one of the key's own quantize jobs).",
        json_schema_extra=owned("any4-checkpoint"),
    )
    eval_set: Literal["wikitext2", "math"] = Field("wikitext2", description="Text to score.")
    eval_windows: int = Field(4, ge=1, le=64)
    seqlen: int = Field(256, ge=32, le=2048)

    @field_validator("checkpoint")
    @classmethod
    def _safe(cls, v: str) -> str:
        if not _CKPT_RE.match(v):
            raise ValueError("checkpoint ids are lowercase letters, digits, '.', '_' and '-'")
        return v


def checkpoint_root() -> Path:
    return Path(get_settings().cache_dir) / "any4" / "checkpoints"


@register_method("any4.quantize", title="any4: quantize a model", queue="cpu", tags=("quantization",))
def quantize_job(params: QuantizeParams, progress: JobContext) -> Report:
    """Quantize a causal LM to any4/int/nf4/fp4 and compare its perplexity with full precision."""
    from methods.any4.experiment import run_quantize

    return run_quantize(params, progress, checkpoint_root())


@register_method("any4.evaluate", title="any4: evaluate a quantized checkpoint", queue="cpu", tags=("quantization",))
def evaluate_job(params: EvaluateParams, progress: JobContext) -> Report:
    """Perplexity of a saved quantized checkpoint against its full-precision base model."""
    from methods.any4.experiment import run_evaluate

    return run_evaluate(params, progress, checkpoint_root())


class Any4Options(ReproducerOptions, Params):
    """Options of ``paperworks reproduce any4`` (defaults: methods/any4/experiment.py ``ReproduceOptions``).

    ``device``/``amp``: where the models are scored (and the clean model trains when not cached).
    """

    group_sizes: list[Literal[32, 64, 128]] = Field([64, 32], min_length=1, description="Group sizes g.")
    variants: list[str] = Field(
        list(DEFAULT_VARIANTS),
        min_length=1,
        description="Rows: FORMAT or FORMAT:CALIBRATION (none, offline, online, dataset).",
    )
    smollm2: bool = Field(True, description="Also quantize SmolLM2-135M (GGUF).")
    smol_windows: int = Field(4, ge=1, le=64, description="WikiText-2 windows scored on SmolLM2.")
    smol_seqlen: int = Field(512, ge=32, le=2048, description="Tokens per SmolLM2 window.")
    clean_windows: int = Field(16, ge=1, le=256, description="Windows scored on the clean model (per eval set).")
    dataset_calib_windows: int = Field(16, ge=1, le=256, description="Math windows of the dataset calibration arm.")
    clean_steps: int | None = Field(
        None, ge=1, le=100_000, description="Training steps of the clean model (default: CleanModelConfig.steps)."
    )
    seed: int = Field(0, ge=0)
    threads: int | None = Field(1, ge=1, le=256, description="torch threads during the run (None = torch's).")


@register_reproducer(
    "any4", options=Any4Options, description="Perplexity of fp/int4/fp4/nf4/any4/any3/any2 at g=64 and 32 on two models"
)
def reproduce(options: Any4Options, progress: JobContext) -> Report:
    """Run the CPU-scale experiment of spec §6; the registry writes ``any4.md`` (+ ``any4/`` figures)."""
    import dataclasses

    from methods.any4.experiment import ReproduceOptions, run_reproduction
    from methods.any4.report import build_report

    kw = options.model_dump(exclude={"clean_steps"})
    opts = ReproduceOptions(**{**kw, "group_sizes": tuple(kw["group_sizes"]), "variants": tuple(kw["variants"])})
    if options.clean_steps is not None:
        opts.clean = dataclasses.replace(opts.clean, steps=options.clean_steps)
    s = get_settings()
    res = run_reproduction(opts, progress, data_dir=Path(s.data_dir), cache_dir=Path(s.cache_dir))
    report = build_report(res, "paperworks reproduce any4" + options.cli_options())
    report.metrics.update({k: res["machine"][k] for k in ("device", "dtype", "gpu") if k in res["machine"]})
    return report
