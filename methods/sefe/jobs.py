"""Registrations: the ``sefe.run`` job (any arms/seeds/sizes) and ``paperworks reproduce sefe``."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field

from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.sefe.config import PRESETS, SefeConfig


class RunParams(SefeConfig):
    """A SEFE experiment (spec §6). Defaults are the spec's caps; heavy on a CPU — use small sizes."""

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


def run_sefe(cfg: SefeConfig, progress: JobContext, *, unit_checks: bool = False, title: str | None = None) -> Report:
    from methods.sefe.checks import all_checks
    from methods.sefe.experiment import run_experiment, zero_shot
    from methods.sefe.report import build_report, expected_direction_checks, reading

    t0 = time.perf_counter()
    zs = zero_shot(cfg, progress.sub(0.0, 0.03))
    exps = run_experiment(cfg, progress.sub(0.03, 0.99))
    checks = all_checks() if unit_checks else []
    kwargs = {"title": title} if title else {}
    report = build_report(cfg, exps, zero_shot=zs, unit_checks=checks, wall_s=time.perf_counter() - t0, **kwargs)
    report.add_section("Reading", reading(exps, checks + expected_direction_checks(exps)))
    progress(1.0, "done")
    return report


@register_method("sefe.run", title="SEFE: continual instruction tuning with ASD and RegLoRA", queue="cpu")
def run(params: RunParams, progress: JobContext) -> Report:
    """Sequential LoRA / ASD / RegLoRA / SEFE / multitask on scikit-learn instruction tasks (SmolLM2-135M):
    accuracy and format-compliance matrices, superficial vs essential forgetting."""
    return run_sefe(SefeConfig(**params.model_dump()), progress)


class SefeOptions(ReproducerOptions):
    """Options of ``paperworks reproduce sefe`` (a preset fills the fields left unset)."""

    PRESETS = {"cpu": {}, "tiny": {}, "spec": {}}
    preset: Literal["cpu", "tiny", "spec"] = Field(
        "cpu", description="cpu (docs/results: 3 seeds, 5 arms, top-4 layers), tiny (smoke), spec (§6 caps, hours)."
    )
    seeds: int | None = Field(None, ge=1, le=10, description="Seeds 0..seeds-1 (default: the preset's).")
    threads: int = Field(1, ge=1, le=16, description="torch threads.")


@register_reproducer(
    "sefe",
    options=SefeOptions,
    description="SEFE on iris → cancer → wine → digits: sequential LoRA, ASD, RegLoRA, SEFE, multitask; ≥ 3 seeds.",
)
def reproduce(options: SefeOptions, progress: JobContext) -> Report:
    """The spec §6 experiment at the preset's size; the registry writes ``sefe.md`` (+ ``sefe/`` figures, JSON)."""
    overrides: dict = {"threads": options.threads}
    if options.seeds:
        overrides["seeds"] = list(range(options.seeds))
    cfg = SefeConfig(**{**PRESETS[options.preset], **overrides})
    report = run_sefe(cfg, progress, unit_checks=True)
    shrunk = (
        f"Shrunk for a shared 2-core CPU (spec §6 allows model/data/epochs/r/α/λ changes, not the algorithm): "
        f"SmolLM2-135M-Instruct with LoRA (r={cfg.rank}, α={cfg.alpha:g}, dropout 0.05, lr {cfg.lr:g}, cosine, 3 % "
        f"warm-up, wd 0) on q,k,v,o,gate,up,down of the top {cfg.adapt_layers or 30} of 30 layers "
        f"(N_mod = {7 * (cfg.adapt_layers or 30)}; the frozen lower layers' outputs are cached); "
        f"{cfg.n_train} training examples × {cfg.epochs} epochs per task, batch {cfg.batch_size}; {cfg.n_test} test "
        f"items per task; greedy answers of ≤ {cfg.max_new_tokens} tokens; ASD X = {cfg.asd_percent:g} % by "
        f"rule-based templates (not the MLLM prompts); λ = {cfg.lam:g}; seeds {list(cfg.seeds)}. "
        "Unchanged: fresh LoRA + merge per task, unscaled B·A top-2 % per matrix, concatenated index lists, "
        "L1 at stored positions averaged per matrix then over matrices, λ·L_reg on every step, ASD's equal split. "
        f"Outside the spec's §6 ranges (said plainly): lr {cfg.lr:g} instead of 2e-4, α/r = {cfg.alpha / cfg.rank:g} "
        f"instead of 2 and batch {cfg.batch_size} instead of 8–16 — with only "
        f"{cfg.n_train * cfg.epochs // cfg.batch_size} optimizer steps per task, the spec's settings did not even teach "
        "task 1's answer format (measured: iris loss 4.7 → 3.0 in 8 steps, every answer 'The answer is: \"iris\"'); "
        "LoRA on 4 of 30 layers instead of all (one full-model training step took 26 s on this machine)."
    )
    stage_s = {
        d["train_s"]
        for e in report.data["arms"].values()
        for r in e["runs"]
        for d in r["diagnostics"]
        if "train_s" in d
    }
    secs = sum(stage_s)  # a stage shared by two arms has one (cached) training time
    reading_sections = [x for x in report.sections if x.title == "Reading"]
    report.sections = [x for x in report.sections if x.title != "Reading"]
    report.add_section("What was shrunk", shrunk)
    report.add_section(
        "Cost",
        f"LoRA training time summed over every distinct stage: {secs / 60:.1f} min on ~0.3 of a shared CPU core "
        "(stages shared between arms — task 1 of sequential/RegLoRA and of ASD/SEFE — are trained once and cached; "
        "evaluation and the frozen-layer features come on top).",
    )
    report.sections += reading_sections  # the plain reading last
    return report
