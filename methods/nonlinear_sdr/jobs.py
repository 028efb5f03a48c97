"""Registered jobs ``nonlinear_sdr.fit`` and ``nonlinear_sdr.simulate`` and the reproducer ``nonlinear_sdr``.

Queue: ``cpu``. The largest computation is an n×n kernel Gram matrix (n ≤ 3,000) or a
64-unit MLP trained full-batch: seconds on a CPU. ``device``/``amp`` (``core.device.DeviceParams``)
apply to the neural machine, the only torch work; the other estimators run in NumPy on the CPU, and
their reports record ``device = cpu``.

``nonlinear_sdr.simulate`` runs a batch of replications of one simulation setting; the
reproducer (:mod:`methods.nonlinear_sdr.experiment`) fans those batches out as jobs through
:func:`core.jobs.dispatch.map_jobs` when this process can reach workers, and runs them in-process otherwise.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.ownership import owned
from methods.nonlinear_sdr.config import DATASETS, ESTIMATORS, MODELS, PRESETS

Method = Literal["linear", "kernel", "neural", "sir", "save", "dr", "phd"]
DatasetName = Literal["diabetes", "breast_cancer", "wine", "iris", "digits"]
ModelName = Literal["M1", "M2", "M3", "M4", "C1", "C2", "C3"]
EstimatorName = Literal[
    "SIR", "SAVE", "DR", "pHd", "PSVM", "PM-ensemble", "kernel PSVM", "kernel PM-ensemble", "neural PSVM"
]
LossName = Literal["hinge", "logistic", "squared_hinge", "least_squares", "ensemble"]
assert DatasetName.__args__ == DATASETS and ModelName.__args__ == MODELS and EstimatorName.__args__ == ESTIMATORS
N_FEATURES = {"diabetes": 10, "breast_cancer": 30, "wine": 13, "iris": 4, "digits": 64}
"""Predictors of each bundled dataset (scikit-learn's ``load_*().data.shape[1]``; a test holds them to it)."""


def check_components(d: int, n_features: int, data: str) -> None:
    """Refuse a dimension ``d`` larger than the data's predictors, in the one sentence every entry shows."""
    if d > n_features:
        raise ValueError(
            f"n_components: d = {d} is larger than the {n_features} features of {data}; "
            f"choose d ≤ {n_features} (0 picks d by BIC)"
        )


class FitParams(DeviceParams):
    """Reduce a bundled dataset or an uploaded CSV (``csv_sha256`` + ``response``)."""

    dataset: DatasetName | None = Field("wine", description="A dataset bundled with scikit-learn (ignored for a CSV).")
    csv_sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 of an uploaded CSV in the artifact store (the key's own upload).",
        json_schema_extra=owned("upload"),
    )
    response: str | None = Field(None, max_length=200, description="The response column of the CSV.")
    method: Method = Field("kernel", description="linear / kernel / neural principal machine, or SIR/SAVE/DR/pHd.")
    n_components: int = Field(0, ge=0, le=50, description="d, or 0 for the BIC-type order (auto).")
    loss: LossName = Field("hinge", description="Loss of the machines; ensemble = all four.")
    lam: float = Field(1.0, gt=0, le=1e4, description="λ of wᵀw + (λ/n) Σ L.")
    n_slices: int = Field(10, ge=2, le=50, description="Slices H of a continuous response (class weights if binary).")
    response_type: Literal["auto", "continuous", "categorical"] = Field(
        "auto", description="How to treat the response."
    )
    multiclass: Literal["ovr", "ovo", "both"] = Field("ovr", description="One-vs-rest and/or one-vs-another.")
    evaluate: bool = Field(True, description="Also report a 5-fold k-NN score against PCA.")
    neural_steps: int = Field(400, ge=10, le=5000, description="Full-batch steps of the neural machine.")

    @model_validator(mode="after")
    def _csv_needs_response(self) -> FitParams:
        if self.csv_sha256 and not self.response:
            raise ValueError("a CSV (csv_sha256) needs the name of its response column (response)")
        if not self.csv_sha256 and not self.dataset:
            raise ValueError("give a dataset or an uploaded CSV (csv_sha256 + response)")
        if not self.csv_sha256 and self.dataset:
            check_components(self.n_components, N_FEATURES[self.dataset], self.dataset)
        return self

    def estimator_params(self, device: str | None = None) -> dict:
        """``PrincipalMachineSDR`` keyword arguments (``device``: the resolved device, default ``self.device``)."""
        return {
            "method": self.method,
            "n_components": self.n_components or "auto",
            "loss": self.loss,
            "lam": self.lam,
            "n_slices": self.n_slices,
            "response": self.response_type,
            "multiclass": self.multiclass,
            "steps": self.neural_steps,
            "device": device or self.device,
            "amp": self.amp,
        }


@register_method(
    "nonlinear_sdr.fit",
    title="Sufficient dimension reduction (principal machines)",
    queue="cpu",
    tags=("sdr", "tabular"),
)
def run_fit(params: FitParams, progress: JobContext) -> Report:
    """Find the sufficient predictors of a table with a linear, kernel or neural principal SVM (or SIR/SAVE/DR)."""
    from methods.nonlinear_sdr.fit import dataset_from, fit_report

    dev = resolve_device(params.device) if params.method == "neural" else resolve_device("cpu")
    ds = dataset_from(params.dataset, params.csv_sha256, params.response)
    check_components(params.n_components, ds.x.shape[1], ds.name)
    report = fit_report(ds, params.estimator_params(str(dev)), evaluate=params.evaluate, progress=progress)
    report.metrics.update(device_provenance(dev, params.amp if params.method == "neural" else "off"))
    return report


class SimulateParams(DeviceParams):
    """A batch of replications of one simulation setting (spec §6)."""

    model: ModelName = Field("M1", description="Simulation model.")
    n: int = Field(200, ge=20, le=20_000, description="Sample size.")
    p: int = Field(10, ge=2, le=200, description="Predictors.")
    seeds: list[int] = Field([0, 1], min_length=1, max_length=200, description="One replication per seed.")
    estimators: list[EstimatorName] = Field(["SIR", "PSVM", "kernel PSVM"], min_length=1, description="Estimators.")
    contamination: float = Field(0.0, ge=0.0, le=0.5, description="Share of corrupted responses.")
    lam: float = Field(1.0, gt=0, le=1e4, description="λ of the machines.")
    n_slices: int = Field(10, ge=2, le=50, description="Slices H.")
    neural_steps: int = Field(400, ge=10, le=5000, description="Full-batch steps of the neural machine.")
    shuffle_y: bool = Field(False, description="Permute Y (the chance baseline).")
    ladle_boot: int = Field(0, ge=0, le=200, description="Bootstraps of the ladle order for PSVM (0 = BIC only).")


@register_method("nonlinear_sdr.simulate", title="SDR simulation replications", queue="cpu", tags=("sdr",))
def run_simulate(params: SimulateParams, progress: JobContext) -> Report:
    """Run replications of one simulation model and return every estimator's errors (report.data["results"])."""
    from methods.nonlinear_sdr.experiment import simulate_batch

    return simulate_batch(params, progress)


class Options(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce nonlinear_sdr``."""

    PRESETS = PRESETS
    preset: Literal["quick", "full", "smoke"] = Field("quick", description="quick (minutes), full (spec scale), smoke.")
    models: list[ModelName] = Field(list(MODELS), min_length=1, description="Simulation models.")
    ns: list[int] = Field([200, 500], min_length=1, description="Sample sizes.")
    ps: list[int] = Field([10], min_length=1, description="Numbers of predictors.")
    reps: int = Field(5, ge=1, le=500, description="Replications per setting.")
    estimators: list[EstimatorName] = Field(
        [e for e in ESTIMATORS if e != "kernel PM-ensemble"], min_length=1, description="Estimators compared."
    )
    contamination: list[float] = Field([0.1, 0.2, 0.3], description="Contamination shares (0 is always run).")
    contamination_models: list[ModelName] = Field(["M1", "M4", "C1"], description="Models contaminated.")
    contamination_n: int = Field(200, ge=20, le=20_000, description="n of the contamination study.")
    lam: float = Field(1.0, gt=0, description="λ of the main study (spec default 1).")
    lam_sweep: list[float] = Field([0.1, 1.0, 10.0, 100.0, 1000.0], description="λ values of the sweep (M1, M2, PSVM).")
    datasets: list[DatasetName] = Field(list(DATASETS), description="Real datasets.")
    digits_n: int = Field(600, ge=0, description="Rows of digits used (0 = all 1,797).")
    c3_ns: list[int] = Field([100, 200, 400, 800, 1600], min_length=2, description="n of the C3 rate check.")
    c3_reps: int = Field(10, ge=1, le=500, description="Replications of the C3 rate check.")
    neural_steps: int = Field(400, ge=10, le=5000, description="Full-batch steps of the neural machine.")
    ladle_boot: int = Field(20, ge=0, le=200, description="Bootstraps of PSVM's ladle order (0 = BIC only).")
    chunk: int = Field(25, ge=1, le=200, description="Replications per sub-job.")
    dispatch: Literal["auto", "inline", "jobs"] = Field(
        "auto",
        description="Sub-jobs through workers (jobs), in this process (inline), or jobs when a worker is reachable.",
    )
    seed: int = Field(0, ge=0, description="First replication seed.")


@register_reproducer(
    "nonlinear_sdr",
    options=Options,
    description="Principal SVM ensembles: simulations M1–M4/C1–C3, contamination, §7 checks, real data",
)
def reproduce(options: Options, progress: JobContext) -> Report:
    """Simulation table (mean ± sd), contamination, λ sweep, spec §7 checks, real-data plots and accuracy."""
    from methods.nonlinear_sdr.experiment import run_reproduction

    return run_reproduction(options, progress)
