"""Jobs ``lsa.synthetic``, ``lsa.lm`` and ``lsa.smollm2`` and the reproducer ``long_short_alignment`` (spec §6).

All are CPU-sized (a 2-layer transformer, minutes; SmolLM2-135M on a few windows) and registered on the
``cpu`` queue; each takes ``device`` / ``amp`` (``core.device.DeviceParams``) and runs its torch work there.
The reproducer fans the synthetic runs out as ``lsa.synthetic`` jobs and the LM seeds as ``lsa.lm`` jobs
(with its own device and amp) when a job sender is registered (a worker or the API process) and runs them
in process otherwise (finished runs are cached under ``<cache_dir>/long_short_alignment/``, keyed without
the device).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.long_short_alignment.config import PRESETS

PE = Literal["nope", "rope", "sinusoidal", "learned"]


class SyntheticParams(DeviceParams):
    task: Literal["mean", "length", "outrep"] = Field("mean", description="Target: mean, length, or 1/√l (OutRep).")
    pe: PE = Field("nope", description="Position encoding.")
    steps: int = Field(300, ge=1, le=20000, description="Adam steps (spec: 3000).")
    seed: int = Field(0, ge=0, le=10_000, description="Seed.")
    eval_per_length: int = Field(500, ge=10, le=5000, description="Test sequences per length (spec: 2000).")


@register_method("lsa.synthetic", title="Long-short alignment: synthetic length generalization", queue="cpu")
def synthetic(params: SyntheticParams, progress: JobContext) -> Report:
    """Train the small causal transformer on l ~ U{1..10} and report MSE at test lengths up to 50."""
    from methods.long_short_alignment.synthetic import SynthConfig, evaluate, train

    dev = resolve_device(params.device)
    cfg = SynthConfig(
        task=params.task, pe=params.pe, steps=params.steps, seed=params.seed, eval_per_length=params.eval_per_length
    )
    model, losses = train(cfg, progress, device=dev, amp=params.amp)
    mse = evaluate(model, cfg, amp=params.amp)
    report = Report(
        title=f"Synthetic {params.task} / {params.pe}",
        summary=f"final train MSE {losses[-1]:.3g}; test MSE at l=50: {mse[50]}",
    )
    report.add_table(
        "MSE by test length", ["l", "MSE"], [[k, v if v is not None else "refused"] for k, v in mse.items()]
    )
    report.data = {
        "params": params.model_dump(),
        "mse": {str(k): v for k, v in mse.items()},
        "final_train_loss": losses[-1],
        "losses": losses[:: max(1, len(losses) // 100)],
    }
    report.metrics["final_train_loss"] = losses[-1]
    report.metrics.update({f"mse@{k}": v for k, v in mse.items() if v is not None})
    report.metrics.update(device_provenance(dev, params.amp))
    return report


class LMParams(DeviceParams):
    l_train: int = Field(64, ge=16, le=512, description="Training length.")
    d: int = Field(64, ge=16, le=256, description="Model width.")
    layers: int = Field(2, ge=1, le=6, description="Layers.")
    stage_a_steps: int = Field(300, ge=1, le=5000, description="Pretraining steps (α = 0).")
    stage_b_steps: int = Field(150, ge=2, le=5000, description="Continued-training steps per α.")
    alphas: list[float] = Field([0.0, 0.1, 1.0], min_length=1, max_length=6, description="Regularizer weights.")
    saves: int = Field(2, ge=1, le=5, description="Evaluations per α run (checkpoints for the correlation).")
    seed: int = Field(0, ge=0, le=10_000, description="Seed.")
    variants: list[Literal["b1", "b2"]] = Field(
        ["b1"],
        min_length=1,
        max_length=2,
        description="Stage B: b1 keeps l_train; b2 extends to 2·l_train with RoPE position interpolation (scale ½).",
    )
    eval_tokens: int = Field(16384, ge=512, le=262_144, description="Held-out tokens per perplexity length.")


@register_method("lsa.lm", title="Long-short alignment: regularized byte LM", queue="cpu")
def lm(params: LMParams, progress: JobContext) -> Report:
    """Pretrain a byte LM on GSM8K+MATH text, continue with L_CE + α·L_misalign per α; perplexity by length."""
    from core.config import get_settings
    from methods.long_short_alignment.lm import LMConfig, run_experiment
    from methods.long_short_alignment.report import lm_tables

    dev = resolve_device(params.device)
    lengths = tuple(params.l_train * k for k in (1, 2, 4))
    cfg = LMConfig(
        l_train=params.l_train,
        d=params.d,
        layers=params.layers,
        stage_a_steps=params.stage_a_steps,
        stage_b_steps=params.stage_b_steps,
        alphas=tuple(params.alphas),
        saves=params.saves,
        seed=params.seed,
        eval_lengths=lengths,
        variants=tuple(dict.fromkeys(params.variants)),
        eval_tokens=params.eval_tokens,
    )
    result = run_experiment(cfg, get_settings().data_dir, progress, device=dev, amp=params.amp)
    report = Report(title="Long-short alignment regularizer on a byte LM", summary="")
    lm_tables(report, result, cfg)
    report.data = {"params": params.model_dump(), **result}
    last = result["runs"][-1]
    report.metrics["last_train_loss"] = last["train_loss"]
    report.metrics["last_heldout_nll"] = last["ppl"][f"heldout@{last['l_train']}"]["nll"]
    report.metrics.update(device_provenance(dev, params.amp))
    return report


class SmolParams(DeviceParams):
    l_train: int = Field(128, ge=16, le=1024, description="l1, l2 ~ U[l_train/2, l_train] tokens (spec: 512).")
    n_samples: int = Field(8, ge=2, le=128, description="Suffix pairs (spec: 64).")
    seed: int = Field(0, ge=0, le=10_000, description="Seed of the lengths and end positions.")


@register_method("lsa.smollm2", title="Long-short alignment: misalignment of SmolLM2-135M", queue="cpu")
def smollm2(params: SmolParams, progress: JobContext) -> Report:
    """L_misalign (SCE, SKL) of the local SmolLM2-135M on WikiText-2, with l1 = l2 and shuffled-context controls."""
    from core.config import get_settings
    from methods.long_short_alignment.report import smol_table
    from methods.long_short_alignment.smol import smollm2_misalignment

    dev = resolve_device(params.device)
    res = smollm2_misalignment(
        get_settings().data_dir,
        l_train=params.l_train,
        n_samples=params.n_samples,
        seed=params.seed,
        progress=progress,
        device=dev,
        amp=params.amp,
    )
    report = Report(title="Long-short misalignment of SmolLM2-135M (WikiText-2)", summary="")
    smol_table(report, res)
    s = res["summary"]
    report.summary = (
        f"SCE {s['sce']['mean']:.3f}, SKL {s['skl']['mean']:.3f} over {params.n_samples} suffix pairs "
        f"(l ∈ [{params.l_train // 2}, {params.l_train}])"
    )
    report.metrics.update({"sce": s["sce"]["mean"], "skl": s["skl"]["mean"], "skl_same": s["skl_same"]["mean"]})
    report.metrics.update(device_provenance(dev, params.amp))
    report.data = {"params": params.model_dump(), **res}
    return report


class Options(ReproducerOptions, DeviceParams):
    PRESETS = PRESETS
    preset: Literal["quick", "seeds5", "spec"] = Field(
        "quick",
        description="quick (~10 min, 1 seed), seeds5 (5 LM seeds, α ∈ {0, 0.1, 1}, B1 + B2, SmolLM2; ~45 min) or spec "
        "(spec scale).",
    )
    seeds: int = Field(1, ge=1, le=10, description="Seeds per synthetic configuration.")
    synth_steps: int = Field(200, ge=1, le=20000, description="Synthetic training steps.")
    eval_per_length: int = Field(300, ge=10, le=5000, description="Synthetic test sequences per length.")
    pes: list[PE] = Field(["nope", "rope", "sinusoidal"], min_length=1, description="Position encodings.")
    lm_l_train: int = Field(64, ge=16, le=512, description="LM training length.")
    lm_d: int = Field(64, ge=16, le=256, description="LM width.")
    lm_layers: int = Field(2, ge=1, le=6, description="LM layers.")
    lm_stage_a_steps: int = Field(200, ge=1, le=5000, description="LM pretraining steps.")
    lm_stage_b_steps: int = Field(100, ge=2, le=5000, description="LM continued-training steps per α.")
    lm_alphas: list[float] = Field([0.0, 0.1, 1.0], min_length=1, max_length=6, description="Regularizer weights.")
    lm_saves: int = Field(2, ge=1, le=5, description="Checkpoints per α for the correlation.")
    lm_seeds: int = Field(1, ge=1, le=10, description="Independent LM runs (stage A + B) for mean ± std and CIs.")
    lm_variants: list[Literal["b1", "b2"]] = Field(
        ["b1"], min_length=1, max_length=2, description="Stage-B variants: b1 (l_train), b2 (2·l_train, RoPE ×½)."
    )
    lm_eval_tokens: int = Field(16384, ge=512, le=262_144, description="Held-out tokens per perplexity length.")
    smollm2_samples: int = Field(0, ge=0, le=128, description="SmolLM2-135M misalignment pairs (0: skip).")
    smollm2_l_train: int = Field(128, ge=16, le=1024, description="SmolLM2 l_train (l1, l2 drawn from l/2 to l).")
    skip_lm: bool = Field(False, description="Only the synthetic study.")
    dispatch: Literal["auto", "inline", "jobs"] = Field("auto", description="Synthetic runs as sub-jobs or inline.")


@register_reproducer(
    "long_short_alignment",
    options=Options,
    description="Long-Short Alignment (ICML 2025): synthetic tasks and the misalignment regularizer",
)
def reproduce(options: Options, progress: JobContext) -> Report:
    """Synthetic §6.1 grid and the §6.2 regularized byte LM with the misalignment/perplexity correlation."""
    from methods.long_short_alignment.experiment import run_reproduction

    return run_reproduction(options, progress)
