"""The CPU-scale reproduction (spec §6): every format at g = 64 and 32, on two models.

For one model, :func:`run_suite` quantizes a fresh copy per (group size, variant),
then measures perplexity on fixed windows, the weight MSE, and the per-layer
output MSE on the calibration prompt. :func:`run_reproduction` runs the clean
from-scratch model and SmolLM2 (flagged as pre-quantized) and returns raw results
that :mod:`methods.any4.report` turns into the Report.

The bodies of the ``any4.quantize`` and ``any4.evaluate`` jobs live here too
(:func:`run_quantize`, :func:`run_evaluate`); ``jobs.py`` holds their params and registration.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from core.config import get_settings
from core.device import autocast, device_provenance, resolve_device
from core.jobs import JobContext, Report
from core.ownership import record_for_job
from core.provenance import provenance
from methods.any4 import plots
from methods.any4.calibrate import read_default_prompt
from methods.any4.checkpoint import load_quantized, read_meta, save_quantized
from methods.any4.clean_model import CleanModelConfig, load_or_train
from methods.any4.config import DEFAULT_VARIANTS, QuantConfig
from methods.any4.data import math_eval_text, math_train_text, text_windows, wikitext_text
from methods.any4.diagnostics import block_diagnostics, gguf_tensor_types
from methods.any4.evaluate import capture_inputs, layer_output_mse, perplexity, ppl_from_nll, window_nll
from methods.any4.grids import FP4_GRID, NF4_GRID
from methods.any4.modules import QuantLinear
from methods.any4.sources import load_base
from methods.any4.walker import linear_layers, quantize_model

log = logging.getLogger(__name__)

#: The table rows: format and calibration (the any-formats' k-means sample weights).


def variant_config(spec: str, group_size: int, seed: int) -> QuantConfig:
    """``"any4:online"`` → QuantConfig(fmt="any4", calibration="online", …)."""
    fmt, _, cal = spec.partition(":")
    return QuantConfig(fmt=fmt, group_size=group_size, calibration=cal or "none", seed=seed)  # type: ignore[arg-type]


@dataclass
class ReproduceOptions:
    """Sizes of the reproduction (defaults fit ~10–15 min on 2 CPU cores)."""

    group_sizes: tuple[int, ...] = (64, 32)
    variants: tuple[str, ...] = DEFAULT_VARIANTS
    clean: CleanModelConfig = field(default_factory=CleanModelConfig)
    clean_windows: int = 16  # × clean.seq_len tokens, WikiText-2 and math text each
    dataset_calib_windows: int = 16  # × clean.seq_len tokens of math train text: the "dataset" calibration arm
    smollm2: bool = True
    smol_windows: int = 4
    smol_seqlen: int = 512
    seed: int = 0
    #: torch intra-op threads during the run (restored after). One thread is the default: on
    #: shared cores every small op otherwise pays an OpenMP wake-up (measured: 4x slower overall
    #: on the 2-core dev machine under load); pass threads=2 on a quiet machine.
    threads: int | None = 1
    #: where the models are scored (and the clean model trains when not cached): cpu, auto, cuda or a torch
    #: device; the k-means and the quantization always run on the CPU. ``amp``: off or bf16 (scoring only).
    device: str = "cpu"
    amp: str = "off"


@dataclass
class SuiteResult:
    """All measurements for one model."""

    model: str
    eval_sets: dict[str, str]
    fp_ppl: dict[str, float]
    fp_window_nll: dict[str, list[float]] = field(default_factory=dict)  # eval set → summed NLL per window
    rows: list[dict] = field(default_factory=list)
    layer_mse: dict[str, dict[str, float]] = field(default_factory=dict)  # "fmt@g" → layer → output MSE
    lut_example: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)


def _row_levels(qmodel: nn.Module, layer: str, row: int) -> dict:
    """The levels a quantized row can take in its first group (weight space), for the LUT plot."""
    mod = qmodel.get_submodule(layer)
    assert isinstance(mod, QuantLinear)
    table = mod.lut[row] if mod.row_lut else mod.lut
    s, z = mod.scales_and_zeros[0, row]
    used = int(2**mod.bits)
    return {"fmt": mod.fmt, "levels": (table[:used] * s + z).tolist()}


def run_suite(
    name: str,
    model: nn.Module,
    windows: dict[str, torch.Tensor],
    calib_ids: torch.Tensor,
    opts: ReproduceOptions,
    progress,
    *,
    extra: list[tuple[str, QuantConfig, torch.Tensor]] = (),
    lut_layer: str | None = None,
) -> SuiteResult:
    """Quantize ``model`` (never modified) under every (g, variant) and measure it."""
    t0 = time.perf_counter()
    targets, _ = linear_layers(model, ("lm_head",))
    names = [n for n, _ in targets]
    fp_weights = {n: m.weight.detach().clone() for n, m in targets}
    inputs = capture_inputs(model, calib_ids, names)
    dev = next(model.parameters()).device
    with autocast(dev, opts.amp):
        fp_nll = {k: window_nll(model, v) for k, v in windows.items()}
    res = SuiteResult(
        model=name,
        eval_sets={k: f"{v.shape[0]}×{v.shape[1]} tokens" for k, v in windows.items()},
        fp_ppl={k: ppl_from_nll(fp_nll[k], v.shape[1] - 1) for k, v in windows.items()},
        fp_window_nll=fp_nll,
    )
    res.notes["tokens_per_window"] = {k: v.shape[1] - 1 for k, v in windows.items()}
    lut_layer = lut_layer or names[len(names) // 2]
    res.lut_example = {"layer": lut_layer, "row": 0, "weights": fp_weights[lut_layer][0, :64].tolist(), "levels": {}}
    jobs = [(spec, variant_config(spec, g, opts.seed), calib_ids) for g in opts.group_sizes for spec in opts.variants]
    jobs += list(extra)
    for i, (label, cfg, ids) in enumerate(jobs):
        sub = progress.sub(i / len(jobs), (i + 1) / len(jobs))
        qmodel = copy.deepcopy(model)
        summary = quantize_model(qmodel, cfg, calib_ids=ids, progress=sub.sub(0.0, 0.7))
        with autocast(dev, opts.amp):
            nll = {k: window_nll(qmodel, v) for k, v in windows.items()}
        ppl = {k: ppl_from_nll(nll[k], v.shape[1] - 1) for k, v in windows.items()}
        out_mse = layer_output_mse(qmodel, fp_weights, inputs)
        res.layer_mse[f"{label}@{cfg.group_size}"] = out_mse
        res.rows.append(
            {
                "variant": label,
                "label": cfg.label() if ":" in label or label == cfg.fmt else label,
                "fmt": cfg.fmt,
                "calibration": cfg.calibration,
                "group_size": cfg.group_size,
                "ppl": ppl,
                "window_nll": nll,
                "weight_mse": summary.weight_mse,
                "output_mse": sum(out_mse.values()) / len(out_mse),
                "bits_per_weight": summary.bits_per_weight,
                "quantize_s": summary.seconds,
            }
        )
        if cfg.group_size == opts.group_sizes[0] and label in ("int4", "nf4", "fp4", "any4:online", "any4:offline"):
            res.lut_example["levels"][label] = _row_levels(qmodel, lut_layer, 0)
        sub(1.0, f"{name}: {cfg.label()} g={cfg.group_size} done")
        log.info("%s %s g=%d: ppl %s", name, cfg.label(), cfg.group_size, {k: round(v, 3) for k, v in ppl.items()})
        del qmodel
    res.notes["seconds"] = time.perf_counter() - t0
    return res


def _clean_suite(
    opts: ReproduceOptions, data_dir: Path, cache_dir: Path, tok_dir: Path, prompt: str, progress
) -> tuple[SuiteResult, dict]:
    dev = resolve_device(opts.device)
    cm = load_or_train(
        opts.clean,
        data_dir=data_dir,
        cache_dir=cache_dir,
        tokenizer_dir=tok_dir,
        progress=progress.sub(0.0, 0.5),
        device=dev,
        amp=opts.amp,
    )
    seq = opts.clean.seq_len
    windows = {
        "wikitext2": text_windows(cm.encode, wikitext_text(data_dir), seq, opts.clean_windows),
        "math": text_windows(cm.encode, math_eval_text(data_dir), seq, opts.clean_windows),
    }
    calib = torch.tensor([cm.encode(prompt)])
    # the "dataset" arm of §7: calibrate on windows of math train text instead of the single prompt
    train_text = math_train_text(data_dir, seed=opts.seed + 1, max_chars=400_000)
    data_calib = text_windows(cm.encode, train_text, seq, opts.dataset_calib_windows)
    label = f"any4 (cal. {data_calib.shape[0]}×{seq} math windows)"
    extra = [
        (label, QuantConfig(fmt="any4", group_size=g, calibration="offline", seed=opts.seed), data_calib)
        for g in opts.group_sizes
    ]
    res = run_suite(
        "clean-llama (from scratch, fp32)",
        cm.model.to(dev),
        windows,
        calib,
        opts,
        progress.sub(0.5, 1.0),
        extra=extra,
        lut_layer="model.layers.1.mlp.down_proj",
    )
    res.notes.update(
        {
            "trained_now": cm.trained_now,
            "calib_tokens": calib.shape[1],
            "train_log": {k: v for k, v in cm.log.items() if k != "losses"},
            "losses": cm.log.get("losses", []),
            "rare_fraction_wikitext": float((windows["wikitext2"] == 0).float().mean()),
            "rare_fraction_math": float((windows["math"] == 0).float().mean()),
        }
    )
    return res, {"path": str(cm.path)}


def _smol_suite(opts: ReproduceOptions, data_dir: Path, prompt: str, progress) -> SuiteResult:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from core.llm.local_models import converted_dir, resolve_source

    path = converted_dir()
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()  # our own copy
    encode = lambda text: tok(text)["input_ids"]  # noqa: E731
    types = gguf_tensor_types(resolve_source().gguf_path())
    linear_types = {t for n, t in types.items() if n.startswith("blk.") and n.endswith(".weight") and "norm" not in n}
    diag = block_diagnostics(model)
    windows = {"wikitext2": text_windows(encode, wikitext_text(data_dir), opts.smol_seqlen, opts.smol_windows)}
    calib = torch.tensor([encode(prompt)])
    res = run_suite(
        "SmolLM2-135M-Instruct (weights pre-quantized, Q4_1)",
        model.to(resolve_device(opts.device)),
        windows,
        calib,
        opts,
        progress,
        lut_layer="model.layers.15.mlp.down_proj",
    )
    counts: dict[str, int] = {}
    for t in types.values():
        counts[t] = counts.get(t, 0) + 1
    res.notes.update(
        {
            "gguf_types": counts,
            "gguf_linear_types": sorted(linear_types),
            "blocks": diag,
            "calib_tokens": calib.shape[1],
        }
    )
    return res


def run_reproduction(opts: ReproduceOptions, progress, *, data_dir: Path, cache_dir: Path) -> dict:
    """Run both suites; returns a JSON-able dict of everything measured."""
    from core.llm.local_models import converted_dir

    dev = resolve_device(opts.device)  # a device this process lacks fails here, before any work
    t0 = time.perf_counter()
    prompt = read_default_prompt(data_dir)
    tok_dir = converted_dir()
    share = 0.45 if opts.smollm2 else 1.0
    prev_threads = torch.get_num_threads()
    if opts.threads:
        torch.set_num_threads(opts.threads)
    try:
        clean, meta = _clean_suite(opts, data_dir, cache_dir, tok_dir, prompt, progress.sub(0.0, share))
        suites = [clean]
        if opts.smollm2:
            suites.append(_smol_suite(opts, data_dir, prompt, progress.sub(share, 1.0)))
        threads_used = torch.get_num_threads()
    finally:
        torch.set_num_threads(prev_threads)
    return {
        "options": {**asdict(opts), "clean": asdict(opts.clean)},
        "suites": [asdict(s) for s in suites],
        "clean_model": meta,
        "seconds": time.perf_counter() - t0,
        "machine": {**provenance(dev, opts.amp, threads=threads_used), "cuda": torch.cuda.is_available()},
    }


# --- job bodies: any4.quantize and any4.evaluate ----------------------------------------------

N_INSPECT_ROWS = 16


def _eval_text(eval_set: str, data_dir: Path) -> str:
    return wikitext_text(data_dir) if eval_set == "wikitext2" else math_eval_text(data_dir)


def _check_group_size(model: torch.nn.Module, cfg: QuantConfig) -> None:
    targets, _ = linear_layers(model, cfg.skip_modules)
    for name, layer in targets:
        if layer.in_features % cfg.group_size:
            raise ValueError(
                f"group_size={cfg.group_size} does not divide K={layer.in_features} of {name}; "
                "SmolLM2 (K=576) needs g=32 or 64"
            )


def row_luts(qlayer: QuantLinear, w: torch.Tensor, rows: int = N_INSPECT_ROWS) -> list[dict]:
    """For the first ``rows`` rows: the learned levels of group 0 and the int4/nf4/fp4 levels of that group."""
    g = qlayer.group_size
    out = []
    for r in range(min(rows, qlayer.out_features)):
        grp = w[r, :g].float()
        lo, hi, absmax = float(grp.min()), float(grp.max()), float(grp.abs().max())
        s_int = max(hi - lo, 1e-6) / 15
        table = qlayer.lut[r] if qlayer.row_lut else qlayer.lut
        s, z = (float(v) for v in qlayer.scales_and_zeros[0, r])
        out.append(
            {
                "row": r,
                "learned": [float(v) * s + z for v in table[: 2**qlayer.bits]],
                "int4": [lo + q * s_int for q in range(16)],
                "nf4": [v * absmax for v in NF4_GRID],
                "fp4": sorted({v * absmax for v in FP4_GRID}),
                "weights": grp.tolist(),
            }
        )
    return out


def checkpoint_id(params) -> str:
    """A stable checkpoint name from the quantization parameters (evaluation-only fields and the device excluded)."""
    blob = json.dumps(
        params.model_dump(exclude={"eval_windows", "seqlen", "inspect_layer", "save_checkpoint", "device", "amp"}),
        sort_keys=True,
    )
    return f"{params.model}-{params.fmt}-g{params.group_size}-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"


def run_quantize(params, progress: JobContext, ckpt_root: Path) -> Report:
    """Quantize, score fp vs quantized perplexity, return LUTs of one layer, save a checkpoint.

    Scoring (and training the clean model when it is not cached) runs on ``params.device`` under
    ``params.amp``; the k-means and the quantization run on a CPU copy; the checkpoint is saved from the CPU.
    """
    dev = resolve_device(params.device)
    s = get_settings()
    data_dir = Path(s.data_dir)
    base = load_base(
        params.model,
        data_dir=data_dir,
        cache_dir=Path(s.cache_dir),
        progress=progress.sub(0.0, 0.2),
        device=dev,
        amp=params.amp,
    )
    cfg = QuantConfig(fmt=params.fmt, group_size=params.group_size, calibration=params.calibration, init=params.init)
    _check_group_size(base.model, cfg)
    windows = text_windows(base.encode, wikitext_text(data_dir), params.seqlen, params.eval_windows)
    calib = torch.tensor([base.encode(read_default_prompt(data_dir))]) if cfg.uses_calibration else None
    progress(0.22, "scoring the full-precision model")
    with autocast(dev, params.amp):
        fp_ppl = perplexity(base.model.to(dev), windows)
    qmodel = copy.deepcopy(base.model).cpu()
    summary = quantize_model(qmodel, cfg, calib_ids=calib, progress=progress.sub(0.3, 0.85))
    progress(0.86, "scoring the quantized model" + (" (Triton kernel)" if dev.type == "cuda" else ""))
    with autocast(dev, params.amp):
        q_ppl = perplexity(qmodel.to(dev), windows)
    qmodel.cpu()
    base.model.cpu()
    names = [st.name for st in summary.layers]
    layer = params.inspect_layer or next((n for n in names[len(names) // 2 :] if "mlp" in n), names[len(names) // 2])
    if layer not in names:
        raise ValueError(f"inspect_layer {layer!r} is not a quantized layer; e.g. {names[0]!r}")
    qlayer = qmodel.get_submodule(layer)
    w = base.model.get_submodule(layer).weight.detach().cpu()
    luts = row_luts(qlayer, w)

    rep = Report(title=f"any4.quantize: {base.name} → {cfg.label()} (g={cfg.group_size})")
    flag = f" [{'; '.join(base.flags)}]" if base.flags else ""
    rep.summary = (
        f"WikiText-2 perplexity {fp_ppl:.3f} (fp32) → {q_ppl:.3f} ({cfg.label()}, g={cfg.group_size}) "
        f"on {windows.shape[0]}×{windows.shape[1]} tokens; {summary.bits_per_weight:.3f} bits/weight{flag}."
    )
    rep.metrics.update(
        {
            "ppl_fp": fp_ppl,
            "ppl_quantized": q_ppl,
            "bits_per_weight": summary.bits_per_weight,
            "weight_mse": summary.weight_mse,
            "layers": len(summary.layers),
            "quantize_seconds": round(summary.seconds, 2),
            **device_provenance(dev, params.amp),
        }
    )
    rep.add_table(
        "Perplexity (WikiText-2)",
        ["model", "perplexity", "bits/weight", "weight MSE"],
        [["fp32", fp_ppl, 32.0, 0.0], [cfg.label(), q_ppl, summary.bits_per_weight, summary.weight_mse]],
        note="; ".join(base.flags),
    )
    lut0 = luts[0]
    s0, z0 = (float(v) for v in qlayer.scales_and_zeros[0, 0])
    rep.add_figure(
        "lut_row0.png",
        plots.lut_vs_grids(
            lut0["learned"],
            max(max(lut0["weights"]) - min(lut0["weights"]), 1e-6) / 15,
            z0,
            max(abs(v) for v in lut0["weights"]),
            min(lut0["weights"]),
        ),
        caption=f"{layer} row 0, group 0: {cfg.fmt} levels vs the int4/nf4/fp4 grids (s={s0:.3g})",
    )
    ckpt = None
    if params.save_checkpoint:
        ckpt = checkpoint_id(params)
        save_quantized(
            qmodel.cpu(),
            ckpt_root / ckpt,
            quant_config=cfg.to_dict(),
            metadata={"base": base.name, "summary": summary.to_dict()},
        )
        rep.metrics["checkpoint"] = ckpt
        record_for_job("any4-checkpoint", ckpt, progress.job_id)  # any4.evaluate may name it: this job's key
    rep.data = {
        "config": cfg.to_dict(),
        "model": base.name,
        "flags": base.flags,
        "checkpoint": ckpt,
        "ppl": {"fp": fp_ppl, "quantized": q_ppl},
        "inspect_layer": layer,
        "row_luts": luts,
        "layers": [
            {"name": st.name, "weight_mse": st.weight_mse, "bits_per_weight": st.bits_per_weight}
            for st in summary.layers
        ],
    }
    progress(1.0, "done")
    return rep


def run_evaluate(params, progress: JobContext, ckpt_root: Path) -> Report:
    """Score a saved checkpoint and its base model on the same windows (on ``params.device``)."""
    dev = resolve_device(params.device)
    path = ckpt_root / params.checkpoint
    if not (path / "any4.json").exists():
        raise ValueError(f"unknown checkpoint {params.checkpoint!r}")
    meta = read_meta(path)
    s = get_settings()
    data_dir = Path(s.data_dir)
    base = load_base(
        meta["metadata"]["base"],
        data_dir=data_dir,
        cache_dir=Path(s.cache_dir),
        progress=progress.sub(0.0, 0.3),
        device=dev,
        amp=params.amp,
    )
    windows = text_windows(base.encode, _eval_text(params.eval_set, data_dir), params.seqlen, params.eval_windows)
    qmodel, _ = load_quantized(path, model=copy.deepcopy(base.model).cpu())
    progress(0.4, "scoring")
    with autocast(dev, params.amp):
        fp_ppl = perplexity(base.model.to(dev), windows)
        q_ppl = perplexity(qmodel.to(dev), windows)
    base.model.cpu()
    qc = meta["quant_config"]
    label = QuantConfig(**{k: (tuple(v) if k == "skip_modules" else v) for k, v in qc.items()}).label()
    rep = Report(
        title=f"any4.evaluate: {params.checkpoint}",
        summary=f"{params.eval_set} perplexity {fp_ppl:.3f} (fp32) vs {q_ppl:.3f} ({label}, "
        f"g={qc['group_size']}) on {windows.shape[0]}×{windows.shape[1]} tokens.",
    )
    rep.metrics.update({"ppl_fp": fp_ppl, "ppl_quantized": q_ppl, **device_provenance(dev, params.amp)})
    rep.add_table(f"Perplexity ({params.eval_set})", ["model", "perplexity"], [["fp32", fp_ppl], [label, q_ppl]])
    rep.data = {"checkpoint": params.checkpoint, "quant_config": qc, "base": meta["metadata"]["base"]}
    progress(1.0, "done")
    return rep
