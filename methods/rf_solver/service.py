"""What the ``rf.edit`` and ``rf.reconstruct`` jobs do: resolve the image, run, build the Report.

Images arrive by reference (Celery tasks take ids): an uploaded file's SHA-256 in the
artifact store, an index into the held-out digits, or the name of a shared example photo.
The model is chosen from the labels (digits "0"–"9" → the digits model; "china"/"flower"
→ the photo model) and trained on first use (see :mod:`methods.rf_solver.checkpoints`).

Both jobs run on their params' ``device`` (inversion, sampling and the V cache's injections there;
the cache itself stays in CPU memory as the spec prescribes) under ``amp``; only the images and
the final numbers come back to the CPU. Reports record the device (``device``, ``dtype``, ``gpu``).
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from core.device import autocast, device_provenance, resolve_device
from core.jobs import JobContext, Report
from methods.rf_solver.checkpoints import get_model
from methods.rf_solver.config import PRESETS
from methods.rf_solver.data import image_to_tensor, load_digits_split, tensor_to_uint8
from methods.rf_solver.edit import DiTVelocity, reconstruct_image, rf_edit
from methods.rf_solver.metrics import summary
from methods.rf_solver.plots import image_grid, recon_vs_nfe

log = logging.getLogger(__name__)

EXAMPLES = ("boy.jpg", "hiking.jpg", "horse.jpg")
MAX_IMAGE_BYTES = 20 * 1024 * 1024


def preset_for_labels(model: str, *labels: str) -> str:
    """ "auto" → the preset whose label set contains every label; otherwise check ``model``'s labels."""
    names = [model] if model != "auto" else [n for n in ("digits", "photo")]
    for name in names:
        if all(lab in PRESETS[name].model.labels for lab in labels):
            return name
    known = {n: list(PRESETS[n].model.labels) for n in ("digits", "photo")}
    raise ValueError(f"labels {list(labels)} do not belong to one model; known labels: {known}")


def resolve_image(
    *, image_sha256: str | None, digit_index: int | None, example: str | None, size: int, channels: int
) -> torch.Tensor:
    """The (1, C, size, size) image in [−1, 1] named by exactly one of the three references."""
    given = [x is not None for x in (image_sha256, digit_index, example)]
    if sum(given) != 1:
        raise ValueError("give exactly one of image_sha256, digit_index, example")
    if image_sha256 is not None:
        from core.artifacts import get_artifact_store

        data = get_artifact_store().read(image_sha256)
        if len(data) > MAX_IMAGE_BYTES:
            raise ValueError("image too large")
        return image_to_tensor(data, size, channels)
    if digit_index is not None:
        if channels != 1 or size != 16:
            raise ValueError("digit_index needs digit labels (0-9)")
        return load_digits_split("test").images[digit_index : digit_index + 1]
    if example not in EXAMPLES:
        raise ValueError(f"unknown example {example!r}; known: {', '.join(EXAMPLES)}")
    from core.config import get_settings

    path = Path(get_settings().data_dir) / "rf_edit_examples" / "source" / example
    if not path.is_file():
        raise FileNotFoundError(f"example image not found at {path}")
    return image_to_tensor(path, size, channels)


def load_velocity_model(preset: str, progress: JobContext, *, device: Any = "cpu", amp: str = "off") -> DiTVelocity:
    """The preset's trained model on ``device`` (trained there first when it is not cached)."""
    steps = PRESETS[preset].train.steps
    model, _ = get_model(
        preset,
        callbacks=(lambda s, _l: progress(s / steps, f"training the {preset} model"),),
        device=device,
        amp=amp,
    )
    return DiTVelocity(model.to(resolve_device(device)))


def edit_report(
    x0: torch.Tensor,
    preset: str,
    source: str,
    target: str,
    *,
    steps: int,
    inject: int,
    order: int,
    guidance: float,
    shift: bool,
    offload: bool,
    progress: JobContext,
    v_keys: str = "interval",
    cfg_halves: str = "both",
    blocks: str = "all",
    device: Any = "cpu",
    amp: str = "off",
) -> Report:
    """Source, reconstruction and edit side by side, with their errors and costs.

    ``v_keys``, ``cfg_halves`` and ``blocks`` are the RF-Edit ablation options; defaults are the spec's.
    """
    dev = resolve_device(device)
    model = load_velocity_model(preset, progress.sub(0.0, 0.6), device=dev, amp=amp)
    x_dev = x0.to(dev)
    progress(0.65, "reconstructing")
    t0 = time.perf_counter()
    with autocast(dev, amp):
        rec, _, rec_nfe = reconstruct_image(model, x_dev, source, steps, order, shift)
    rec = rec.float().cpu()
    t_rec = time.perf_counter() - t0
    progress(0.8, "editing")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rf-vcache-") as tmp, autocast(dev, amp):
        res = rf_edit(
            model,
            x_dev,
            source,
            target,
            num_steps=steps,
            inject_k=inject,
            order=order,
            guidance=guidance,
            shift=shift,
            offload_dir=Path(tmp) if offload else None,
            keying=v_keys,  # type: ignore[arg-type]
            cfg_halves=cfg_halves,  # type: ignore[arg-type]
            blocks=blocks,
        )
    edited = res.edited.float().cpu()
    t_edit = time.perf_counter() - t0
    rec_m, edit_m = summary(rec, x0), summary(edited, x0)
    report = Report(
        title=f"RF-Edit: {source} → {target}",
        summary=f"{preset} model, {steps} steps, order {order}, inject {inject}, guidance {guidance}: "
        f"reconstruction PSNR {rec_m['psnr']:.1f} dB; edit MSE to source {edit_m['mse']:.4f}.",
    )
    report.metrics.update(
        {
            "recon_mse": rec_m["mse"],
            "recon_psnr": rec_m["psnr"],
            "recon_ssim": rec_m["ssim"],
            "edit_mse_to_source": edit_m["mse"],
            "edit_ssim_to_source": edit_m["ssim"],
            "recon_nfe": rec_nfe,
            "edit_nfe": res.nfe,
            "cached_v_tensors": res.cached_tensors,
            "cache_mb": round(res.cache_bytes / 1e6, 3),
            "recon_seconds": round(t_rec, 3),
            "edit_seconds": round(t_edit, 3),
            **device_provenance(dev, amp),
        }
    )
    scale = 16 if x0.shape[-1] <= 16 else 8
    report.add_image("source.png", tensor_to_uint8(x0).repeat(scale, 0).repeat(scale, 1), caption="source")
    report.add_image(
        "reconstruction.png",
        tensor_to_uint8(rec).repeat(scale, 0).repeat(scale, 1),
        caption="reconstruction (same label, no injection)",
    )
    report.add_image(
        "edit.png",
        tensor_to_uint8(edited).repeat(scale, 0).repeat(scale, 1),
        caption=f"edit ({target}, inject {inject})",
    )
    report.add_image(
        "side_by_side.png",
        image_grid([torch.cat([x0, rec, edited])], scale=scale),
        caption="source | reconstruction | edit",
    )
    report.add_section("Images", "![source | reconstruction | edit](artifact:side_by_side.png)")
    report.data = {"preset": preset, "timesteps": res.timesteps, "source": source, "target": target}
    progress(1.0, "done")
    return report


def reconstruct_report(
    x0: torch.Tensor,
    preset: str,
    label: str,
    *,
    nfes: list[int],
    shift: bool,
    progress: JobContext,
    device: Any = "cpu",
    amp: str = "off",
) -> Report:
    """Reconstruction error vs NFE per direction for Euler and RF-Solver-2 (equal NFE)."""
    dev = resolve_device(device)
    model = load_velocity_model(preset, progress.sub(0.0, 0.5), device=dev, amp=amp)
    x_dev = x0.to(dev)
    rows, images = [], []
    for i, nfe in enumerate(nfes):
        progress(0.5 + 0.5 * i / len(nfes), f"NFE {nfe}")
        for solver, order in (("Euler (equal NFE)", 1), ("RF-Solver-2", 2)):
            n = nfe // order
            t0 = time.perf_counter()
            with autocast(dev, amp):
                rec, _, total = reconstruct_image(model, x_dev, label, n, order, shift)
            rec = rec.float().cpu()
            m = summary(rec, x0)
            rows.append(
                {
                    "dataset": "input",
                    "solver": solver,
                    "steps": n,
                    "nfe": total,
                    **m,
                    "seconds": time.perf_counter() - t0,
                }
            )
            if nfe == nfes[-1] or nfe == nfes[0]:
                images.append(rec)
    report = Report(
        title=f"RF reconstruction of a {preset} image ({label})",
        summary="Invert then sample with the same label; RF-Solver-2 with N steps vs Euler with 2N.",
    )
    report.add_table(
        "Reconstruction vs NFE",
        ["solver", "steps", "NFE (both directions)", "MSE", "PSNR dB", "SSIM", "seconds"],
        [[r["solver"], r["steps"], r["nfe"], r["mse"], r["psnr"], r["ssim"], round(r["seconds"], 3)] for r in rows],
    )
    report.add_figure("recon_vs_nfe.png", recon_vs_nfe(rows, "input"), caption="reconstruction MSE vs NFE")
    scale = 16 if x0.shape[-1] <= 16 else 8
    report.add_image(
        "reconstructions.png",
        image_grid([torch.cat([x0, *images])], scale=scale),
        caption=f"source, then Euler/RF-Solver-2 at NFE {nfes[0]} and {nfes[-1]}",
    )
    for r in rows:
        tag = "rf2" if r["solver"] == "RF-Solver-2" else "euler"
        report.metrics[f"{tag}_mse_nfe{r['nfe'] // 2}"] = r["mse"]
    report.metrics.update(device_provenance(dev, amp))
    report.data = {"rows": rows}
    progress(1.0, "done")
    return report
