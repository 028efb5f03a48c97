"""Job ``continual.run``: any registered continual method, over seeds, with progress per task."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import JobContext, Report, register_method
from methods.continual.data import DATASETS
from methods.continual.harness import run_experiment, seed_list
from methods.continual.learner import get_learner
from methods.continual.report import experiment_report


class ContinualParams(DeviceParams):
    """What to run: a harness method on a dataset cut into class-incremental tasks (on ``device``)."""

    method: str = Field(
        "dpcr",
        min_length=1,
        max_length=64,
        description="A registered continual method (GET /v1/methods lists its options).",
    )
    dataset: str = Field("digits", min_length=1, max_length=64, description="A harness dataset.")
    seeds: int = Field(1, ge=1, le=10, description="Number of seeds (class order, subsample, init).")
    first_seed: int = Field(1993, ge=0, le=2**31 - 1, description="Seeds are first_seed, first_seed+1, ...")
    classes_per_task: int = Field(2, ge=1, le=1000)
    n_tasks: int | None = Field(None, ge=1, le=1000, description="Stop after this many tasks (default: all).")
    samples_per_class: int | None = Field(
        None, ge=2, le=100000, description="Keep at most this many training samples per class."
    )
    options: dict[str, Any] = Field(default_factory=dict, description="The method's own options.")
    threads: int = Field(1, ge=1, le=64, description="Torch intra-op threads while training.")

    @model_validator(mode="after")
    def _known(self) -> ContinualParams:
        if self.dataset not in DATASETS:
            raise ValueError(f"unknown dataset {self.dataset!r}; known: {', '.join(sorted(DATASETS))}")
        try:
            spec = get_learner(self.method)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        if spec.protocol != "class_incremental":
            raise ValueError(
                f"{self.method!r} is a {spec.protocol} learner; continual.run runs class-incremental ones "
                f"(X-TAIL learners run with job lada.xtail)"
            )
        spec.validate_options(self.options)
        if not spec.takes_device and (self.device == "cuda" or self.amp != "off"):
            raise ValueError(f"{self.method!r} runs on the CPU only: use device cpu (or auto) and amp off")
        return self


@register_method(
    "continual.run",
    title="Class-incremental run",
    description="Run a continual method (e.g. DPCR and its comparison arms) task by task over "
    "several seeds; report accuracy matrices, A_f, Ā, forgetting and old/new accuracy.",
    queue="cpu",
    tags=("continual",),
)
def run(params: ContinualParams, progress: JobContext) -> Report:
    """Run ``params.method`` over ``params.seeds`` seeds and report every head's metrics."""
    spec = get_learner(params.method)
    dev = resolve_device(params.device)
    if not spec.takes_device and dev.type != "cpu":  # ``auto`` on a GPU worker: this learner stays on the CPU
        dev = resolve_device("cpu")
    exp = run_experiment(
        params.method,
        seeds=seed_list(params.seeds, params.first_seed),
        options=params.options,
        dataset=params.dataset,
        classes_per_task=params.classes_per_task,
        samples_per_class=params.samples_per_class,
        n_tasks=params.n_tasks,
        threads=params.threads,
        progress=progress,
        device=dev,
        amp=params.amp,
    )
    report = experiment_report(
        exp,
        title=f"{params.method} on {params.dataset}"
        + (f", {params.samples_per_class} samples/class" if params.samples_per_class else ""),
    )
    report.metrics.update(device_provenance(dev, params.amp))
    progress(1.0, "done")
    return report
