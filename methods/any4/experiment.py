"""The CPU-scale reproduction (spec §6): every format at g = 64 and 32, on two models.

For one model, :func:`run_suite` quantizes a fresh copy per (group size, variant),
then measures perplexity on fixed windows, the weight MSE, and the per-layer
output MSE on the calibration prompt. :func:`run_reproduction` runs the clean
from-scratch model and SmolLM2 (flagged as pre-quantized) and returns raw results
that :mod:`methods.any4.report` turns into the Report.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from core.device import autocast, resolve_device
from core.provenance import provenance
from methods.any4.calibrate import read_default_prompt
from methods.any4.clean_model import CleanModelConfig, load_or_train
from methods.any4.config import QuantConfig
from methods.any4.data import math_eval_text, math_train_text, text_windows, wikitext_text
from methods.any4.diagnostics import block_diagnostics, gguf_tensor_types
from methods.any4.evaluate import capture_inputs, layer_output_mse, ppl_from_nll, window_nll
from methods.any4.modules import QuantLinear
from methods.any4.walker import linear_layers, quantize_model

log = logging.getLogger(__name__)

#: The table rows: format and calibration (the any-formats' k-means sample weights).
DEFAULT_VARIANTS = ("int4", "fp4", "nf4", "any4:none", "any4:offline", "any4:online", "any3:offline", "any2:offline")


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
