"""Registrations: the ``sefe.run`` job (any arms/seeds/sizes) and ``paperworks reproduce sefe``."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.sefe.config import PRESETS, SefeConfig


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


def run_sefe(
    cfg: SefeConfig,
    progress: JobContext,
    *,
    unit_checks: bool = False,
    title: str | None = None,
    device: Any = "cpu",
    amp: str = "off",
    cache_dir: Path | None = None,
) -> Report:
    """Zero-shot answers, every arm × seed, and the report; the model runs on ``device``."""
    from methods.sefe.checks import all_checks
    from methods.sefe.experiment import run_experiment, zero_shot
    from methods.sefe.report import build_report, expected_direction_checks, reading

    dev = resolve_device(device)
    t0 = time.perf_counter()
    zs = zero_shot(cfg, progress.sub(0.0, 0.03), cache_dir=cache_dir, device=dev, amp=amp)
    exps = run_experiment(cfg, progress.sub(0.03, 0.99), cache_dir=cache_dir, device=dev, amp=amp)
    checks = all_checks() if unit_checks else []
    kwargs = {"title": title} if title else {}
    report = build_report(cfg, exps, zero_shot=zs, unit_checks=checks, wall_s=time.perf_counter() - t0, **kwargs)
    report.add_section("Reading", reading(exps, checks + expected_direction_checks(exps), cfg.lam))
    for arm, exp in exps.items():  # the training loss at the end of the last task, mean over seeds
        last = [r.diagnostics[-1]["ce"] for r in exp.runs if r.diagnostics and "ce" in r.diagnostics[-1]]
        if last:
            report.metrics[f"{arm}.train_ce_last"] = sum(last) / len(last)
    report.metrics.update(device_provenance(dev, amp))
    progress(1.0, "done")
    return report


@register_method("sefe.run", title="SEFE: continual instruction tuning with ASD and RegLoRA", queue="cpu")
def run(params: RunParams, progress: JobContext) -> Report:
    """Sequential LoRA / ASD / RegLoRA / SEFE / multitask on scikit-learn instruction tasks (SmolLM2-135M):
    accuracy and format-compliance matrices, superficial vs essential forgetting."""
    dev = resolve_device(params.device)
    cfg = SefeConfig(**params.model_dump(exclude={"device", "amp", "cache"}))
    if params.cache:
        return run_sefe(cfg, progress, device=dev, amp=params.amp)
    with tempfile.TemporaryDirectory(prefix="sefe-run-") as tmp:
        return run_sefe(cfg, progress, device=dev, amp=params.amp, cache_dir=Path(tmp))


class SefeOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce sefe`` (a preset fills the fields left unset)."""

    PRESETS = {"cpu": {}, "cpu-small": {}, "tiny": {}, "spec": {}}
    preset: Literal["cpu", "cpu-small", "tiny", "spec"] = Field(
        "cpu",
        description="cpu (docs/results: 3 seeds, 5 arms + λ sweep, top-8 layers, ~2 h), cpu-small (top-4 layers, "
        "32 examples: tasks not learned), tiny (smoke), spec (§6 caps, all 30 layers, many hours).",
    )
    seeds: int | None = Field(None, ge=1, le=10, description="Seeds 0..seeds-1 (default: the preset's).")
    threads: int = Field(1, ge=1, le=16, description="torch threads.")


def train_sizes(cfg: SefeConfig) -> dict[str, int]:
    """Training examples per task: ``n_train`` or the whole training split when it is smaller."""
    from methods.sefe.tasks import load_task

    return {t: min(cfg.n_train, len(load_task(t).train_idx)) for t in cfg.tasks}


def outside_spec(cfg: SefeConfig) -> str:
    """What of ``cfg`` lies outside the spec's §6 ranges, and why (measured on this machine)."""
    out = []
    if cfg.lr != 2e-4:
        out.append(f"lr {cfg.lr:g} instead of 2e-4")
    if cfg.alpha / cfg.rank != 2:
        out.append(f"α/r = {cfg.alpha / cfg.rank:g} instead of 2")
    if not 8 <= cfg.batch_size <= 16:
        out.append(f"batch {cfg.batch_size} instead of 8–16")
    if cfg.epochs > 3:
        out.append(f"{cfg.epochs} epochs instead of 1–3")
    text = ""
    if out:
        text += (
            "Outside the spec's §6 ranges (said plainly): "
            + ", ".join(out)
            + ". With ≤ 600 examples and 1–3 epochs a task gets a few dozen to a few hundred optimizer steps, and at "
            "the spec's settings the 135M model did not learn (measured: iris loss 4.7 → 3.0 in 8 steps at lr 2e-4, "
            "every answer 'The answer is: \"iris\"'; at lr 1e-3 and batch 8, 42 steps, every answer one species, "
            "31.6 % = the majority class; at batch 4, 84 steps, 97.4 %). "
        )
    if cfg.adapt_layers:
        text += (
            f"LoRA on the top {cfg.adapt_layers} of 30 layers instead of all (one full-model training step took 26 s "
            "on this shared machine; with the top 4 layers iris stayed at one answer for every flower, 34 %, where "
            "the top 8 reached 97 %)."
        )
    return text


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
    report = run_sefe(cfg, progress, unit_checks=True, device=options.device, amp=options.amp)
    shrunk = (
        f"Shrunk for a shared 2-core CPU (spec §6 allows model/data/epochs/r/α/λ changes, not the algorithm): "
        f"SmolLM2-135M-Instruct with LoRA (r={cfg.rank}, α={cfg.alpha:g}, dropout 0.05, lr {cfg.lr:g}, cosine, 3 % "
        f"warm-up, wd 0) on q,k,v,o,gate,up,down of the top {cfg.adapt_layers or 30} of 30 layers "
        f"(N_mod = {7 * (cfg.adapt_layers or 30)}; the frozen lower layers' outputs are cached); "
        f"≤ {cfg.n_train} training examples × {cfg.epochs} epochs per task ("
        + ", ".join(f"{t} {n}" for t, n in train_sizes(cfg).items())
        + f"), batch {cfg.batch_size}; {cfg.n_test} test "
        f"items per task; greedy answers of ≤ {cfg.max_new_tokens} tokens; ASD X = {cfg.asd_percent:g} % by "
        f"rule-based templates (not the MLLM prompts); λ = {cfg.lam:g}; seeds {list(cfg.seeds)}"
        + (
            f"; λ sweep {', '.join(f'{x:g}' for x in cfg.lam_sweep)} on the first {cfg.sweep_seeds or len(cfg.seeds)} "
            "seed(s)"
            if cfg.lam_sweep
            else ""
        )
        + ". "
        "Unchanged: fresh LoRA + merge per task, unscaled B·A top-2 % per matrix, concatenated index lists, "
        "L1 at stored positions averaged per matrix then over matrices, λ·L_reg on every step, ASD's equal split. "
        + outside_spec(cfg)
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
        f"LoRA training time summed over every distinct stage: {secs / 60:.1f} min with {cfg.threads} torch thread(s) on the 2-core machine "
        "(stages shared between arms — task 1 of sequential/RegLoRA and of ASD/SEFE — are trained once and cached; "
        "evaluation and the frozen-layer features come on top).",
    )
    report.sections += reading_sections  # the plain reading last
    return report
