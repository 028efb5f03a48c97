"""Jobs: ``clinical_got.case`` (one case through one graph), ``clinical_got.run`` (a benchmark arm over many
cases, inline or fanned out to the workers) and ``paperworks reproduce clinical_got``."""

from __future__ import annotations

import logging
import time
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from agents.clinical_got.config import PRESETS, ClinicalGotConfig, Node
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.clinical_got.config import BenchConfig

log = logging.getLogger(__name__)
RUN_ID = r"^[A-Za-z0-9_.:-]{1,64}$"


class CaseParams(BaseModel):
    """One case through the CGoT graph or the direct baseline."""

    case_id: str = Field("case000", pattern=r"^case\d{3,4}$", description="A case of the benchmark (case000…).")
    mode: Literal["cgot", "direct"] = Field("cgot", description="CGoT graph or the direct-question baseline.")
    model: str | None = Field(None, max_length=200, description="litellm model string; default the configured one.")
    n_cases: int = Field(133, ge=1, le=2000, description="Benchmark size (the case must be inside it).")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Benchmark seed.")
    visual: Literal["auto", "findings", "images", "both"] = Field("auto", description="Visual input (see config).")
    score_knowledge: Literal["clinic", "math"] = Field("clinic", description="N3's score knowledge text.")
    oracle_nodes: list[Node] = Field(default_factory=list, max_length=4, description="Nodes given the ground truth.")
    run_id: str | None = Field(None, pattern=RUN_ID, description="Store the answers under this run (fan-out).")
    arm: str = Field("single", pattern=r"^[A-Za-z0-9_.:-]{1,40}$", description="Arm name the answers are stored as.")

    @model_validator(mode="after")
    def _case_in_benchmark(self) -> CaseParams:
        ids = BenchConfig(n_cases=self.n_cases, seed=self.seed).case_ids()
        if self.case_id not in ids:
            raise ValueError(
                f"case_id: {self.case_id} is not in a benchmark of {self.n_cases} cases ({ids[0]} … {ids[-1]})"
            )
        return self

    def config(self) -> ClinicalGotConfig:
        return ClinicalGotConfig(
            model=self.model,
            bench=BenchConfig(n_cases=self.n_cases, seed=self.seed),
            visual=self.visual,
            score_knowledge=self.score_knowledge,
            oracle_nodes=self.oracle_nodes,
        )


@register_method(
    "clinical_got.case",
    title="Clinical GoT: one case",
    description="One synthetic HIE case through the Clinical Graph-of-Thoughts (N1 grading, N2 anatomy, N2.5 rare "
    "locations, N3 score, N4 2-year outcome, N5 summary) or the direct baseline; the per-node trace.",
)
def case_job(params: CaseParams, progress: JobContext) -> Report:
    from agents.clinical_got.experiment import run_one, trace_report

    progress(0.05, f"{params.case_id} ({params.mode})")
    row, case = run_one(params.case_id, params.config(), params.mode, run_id=params.run_id, arm=params.arm)
    progress(1.0, "done")
    return trace_report(row, case, params.mode, params.config())


class RunParams(BaseModel):
    """An arm of the benchmark over its first ``n_cases`` cases."""

    mode: Literal["cgot", "direct"] = Field("cgot", description="CGoT graph or the direct-question baseline.")
    model: str | None = Field(None, max_length=200, description="litellm model string; default the configured one.")
    n_cases: int = Field(5, ge=1, le=2000, description="Cases to run (the benchmark's first n).")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Benchmark seed.")
    visual: Literal["auto", "findings", "images", "both"] = Field("auto", description="Visual input (see config).")
    score_knowledge: Literal["clinic", "math"] = Field("clinic", description="N3's score knowledge text.")
    oracle_nodes: list[Node] = Field(default_factory=list, max_length=4, description="Nodes given the ground truth.")
    fan_out: Literal["inline", "jobs"] = Field(
        "inline", description="Run cases here, or as clinical_got.case jobs on the workers (Celery fan-out)."
    )


@register_method(
    "clinical_got.run",
    title="Clinical GoT: benchmark run",
    description="One arm (CGoT or direct, optional oracle nodes) over the synthetic HIE-Reasoning stand-in: all six "
    "task metrics (grading, anatomy P/R/F1/Jaccard, rare locations, score, outcome accuracy / balanced accuracy, "
    "ROUGE); cases inline or fanned out to the workers.",
)
def run_job(params: RunParams, progress: JobContext) -> Report:
    from agents.clinical_got.experiment import Arm, run_arm
    from agents.clinical_got.report import arm_report

    cfg = CaseParams(
        model=params.model,
        n_cases=params.n_cases,
        seed=params.seed,
        visual=params.visual,
        score_knowledge=params.score_knowledge,
        oracle_nodes=params.oracle_nodes,
    ).config()
    arm = Arm(
        name=params.mode + ("+oracle:" + ",".join(params.oracle_nodes) if params.oracle_nodes else ""),
        mode=params.mode,
        config=cfg,
    )
    result = run_arm(arm, cfg.bench.case_ids(), progress, fan_out=params.fan_out)
    return arm_report(result)


class ClinicalGotOptions(ReproducerOptions):
    PRESETS = PRESETS
    preset: Literal["small", "medium", "tiny", "spec"] = Field(
        "small", description="small (the results run, minutes), medium, tiny (tests), spec (133 cases, hours)."
    )
    n_cases: int = Field(6, ge=1, le=2000, description="Cases for the default (135M) model.")
    n_cases_large: int = Field(
        1, ge=0, le=2000, description="Cases for the opt-in 1.5B model (skipped when not installed; 0 = skip)."
    )
    models: list[str] = Field(
        ["local/smollm2-135m-instruct", "local/qwen2.5-coder-1.5b-instruct"],
        min_length=1,
        max_length=4,
        description="Gateway models; the second and later run on n_cases_large cases; absent local ones are skipped.",
    )
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Benchmark seed.")
    fan_out: Literal["inline", "jobs"] = Field("inline", description="Cases here or as worker jobs.")


@register_reproducer(
    "clinical_got",
    options=ClinicalGotOptions,
    description="Clinical GoT vs the direct question on the synthetic HIE-Reasoning stand-in (local models, "
    "oracle-upstream upper bound, all six task metrics)",
)
def reproduce(options: ClinicalGotOptions, progress: JobContext) -> Report:
    from agents.clinical_got.experiment import reproduce_arms
    from agents.clinical_got.report import reproduce_report

    t0 = time.perf_counter()
    results, skipped = reproduce_arms(options, progress)
    return reproduce_report(
        results,
        skipped=skipped,
        options=options.model_dump(mode="json"),
        command="paperworks reproduce clinical_got" + options.cli_options(),
        wall_s=time.perf_counter() - t0,
    )
