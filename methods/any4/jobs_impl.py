"""Bodies of the any4 jobs (kept out of ``jobs.py`` so registering them stays cheap)."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path

import torch

from core.config import get_settings
from core.device import autocast, device_provenance, resolve_device
from core.jobs import JobContext, Report
from core.ownership import record_for_job
from methods.any4 import plots
from methods.any4.calibrate import read_default_prompt
from methods.any4.checkpoint import load_quantized, read_meta, save_quantized
from methods.any4.config import QuantConfig
from methods.any4.data import math_eval_text, text_windows, wikitext_text
from methods.any4.evaluate import perplexity
from methods.any4.grids import FP4_GRID, NF4_GRID
from methods.any4.modules import QuantLinear
from methods.any4.sources import load_base
from methods.any4.walker import linear_layers, quantize_model

log = logging.getLogger(__name__)
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
