"""What the ``fourier_mamba.*`` jobs do: keep trained models, resolve images, derain, build the Report.

Trained networks are cached as ``<cache_dir>/fourier_mamba/<preset>-<scan order>.pt`` (state dict +
configs + loss history). The derain job uses the cached model of its preset and trains it on first
use; ``fourier_mamba.train`` (re)trains one explicitly. Images arrive by reference: an uploaded
file's SHA-256 in the artifact store, or a sample name (the 3 Rain100L pairs, china, flower).
Both jobs run on their params' ``device`` under ``amp`` (training, and the derain forward pass); the
cached model does not depend on where it was trained (saved from the CPU, loaded there, then moved).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from core.config import get_settings
from core.device import autocast, device_provenance, resolve_device
from core.jobs import JobContext, Report
from methods.fourier_mamba.config import ModelConfig, TrainConfig, get_preset
from methods.fourier_mamba.data import add_rain, rain100l_pairs, sklearn_backgrounds
from methods.fourier_mamba.evaluate import derain_np
from methods.fourier_mamba.metrics import psnr_y, ssim_y
from methods.fourier_mamba.model import FourierMambaNet, count_params
from methods.fourier_mamba.train import TrainResult, train_model

log = logging.getLogger(__name__)

SAMPLES = ("rain100l_1", "rain100l_2", "rain100l_3", "china", "flower")
MAX_SIDE = 640  # larger images are downscaled before deraining (the scan runs over every frequency)


def checkpoint_path(preset: str, scan_order: str) -> Path:
    s = get_settings()
    root = Path(s.cache_dir) if s.cache_dir else Path(s.home) / "cache"
    return root / "fourier_mamba" / f"{preset}-{scan_order}.pt"


def save_model(result: TrainResult, train_cfg: TrainConfig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "model": result.model.cfg.to_dict(),
            "train": train_cfg.to_dict(),
            "state": result.model.state_dict(),
            "losses": result.losses,
            "seconds": result.seconds,
        },
        tmp,
    )
    tmp.replace(path)
    return path


def load_model(path: Path) -> tuple[FourierMambaNet, dict[str, Any]]:
    blob = torch.load(path, map_location="cpu", weights_only=False)
    model = FourierMambaNet(ModelConfig.from_dict(blob["model"]))
    model.load_state_dict(blob["state"])
    model.eval()
    return model, blob


def train_and_save(
    preset: str, scan_order: str, progress: JobContext, *, device: Any = None, **train_overrides: Any
) -> TrainResult:
    """Train the preset (``train_overrides`` replace TrainConfig fields) and cache it.

    ``device``: any torch device, overriding the config's (``cpu``/``auto``/``cuda``); the stored config
    then records it (``str(device)``) as the device it was trained on.
    """
    if device is not None:
        train_overrides["device"] = str(device)
    p = get_preset(preset).with_model(scan_order=scan_order).with_train(**train_overrides)
    result = train_model(p.model, p.train, get_settings().data_dir, progress=progress, device=device)
    save_model(result, p.train, checkpoint_path(preset, scan_order))
    return result


def get_model(
    preset: str, scan_order: str, progress: JobContext, *, device: Any = "cpu", amp: str = "off"
) -> tuple[FourierMambaNet, dict[str, Any]]:
    """The cached model on ``device``, trained there first when there is none."""
    dev = resolve_device(device)
    path = checkpoint_path(preset, scan_order)
    if not path.is_file():
        progress(0.0, f"no trained {preset}/{scan_order} model yet: training it on {dev}")
        train_and_save(preset, scan_order, progress.sub(0.0, 0.9), device=dev, amp=amp)
    model, blob = load_model(path)
    return model.to(dev), blob


def fit_side(img: np.ndarray, side: int = MAX_SIDE) -> np.ndarray:
    """Downscale (bicubic) so the longest side is at most ``side``."""
    h, w = img.shape[:2]
    if max(h, w) <= side:
        return img
    scale = side / max(h, w)
    pil = Image.fromarray((img * 255).round().astype(np.uint8)).resize(
        (max(16, round(w * scale)), max(16, round(h * scale))), Image.Resampling.BICUBIC
    )
    return np.asarray(pil, dtype=np.float32) / 255.0


def resolve_image(*, image_sha256: str | None, sample: str | None) -> tuple[str, np.ndarray, np.ndarray | None]:
    """(name, image, ground truth or None). A Rain100L sample is its real rainy input with its clean target."""
    if (image_sha256 is None) == (sample is None):
        raise ValueError("give exactly one of image_sha256, sample")
    if image_sha256 is not None:
        from core.artifacts import get_artifact_store

        with Image.open(io.BytesIO(get_artifact_store().read(image_sha256))) as im:
            img = np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0
        return f"upload {image_sha256[:12]}", fit_side(img), None
    if sample in ("china", "flower"):
        return sample, sklearn_backgrounds()[sample], None
    if sample not in SAMPLES:
        raise ValueError(f"unknown sample {sample!r}; known: {', '.join(SAMPLES)}")
    pairs = {f"rain100l_{n}": (r, c) for n, r, c in rain100l_pairs(Path(get_settings().data_dir))}
    if sample not in pairs:
        raise FileNotFoundError(f"{sample} needs the rain100l_sample data folder")
    rainy, clean = pairs[sample]
    return sample, rainy, clean


def derain_report(
    *,
    image_sha256: str | None,
    sample: str | None,
    add_rain_kind: str | None,
    rain_seed: int,
    preset: str,
    scan_order: str,
    progress: JobContext,
    device: Any = "cpu",
    amp: str = "off",
) -> Report:
    """Derain one image on ``device``; with synthetic rain added the clean image becomes the ground truth."""
    dev = resolve_device(device)
    name, img, gt = resolve_image(image_sha256=image_sha256, sample=sample)
    if add_rain_kind is not None:
        gt, img = img, add_rain(img, np.random.default_rng(rain_seed), add_rain_kind)  # type: ignore[arg-type]
    model, blob = get_model(preset, scan_order, progress, device=dev, amp=amp)
    progress(0.92, "deraining")
    with autocast(dev, amp):
        out = derain_np(model, img)
    report = Report(title=f"FourierMamba deraining: {name}")
    report.add_image("input.png", img, caption="input")
    report.add_image("output.png", out, caption="FourierMamba output")
    panels = ["![input](artifact:input.png)", "![output](artifact:output.png)"]
    if gt is not None:
        report.add_image("ground_truth.png", gt, caption="ground truth")
        panels.append("![ground truth](artifact:ground_truth.png)")
        scores = {
            "psnr_y_input": psnr_y(img, gt),
            "ssim_y_input": ssim_y(img, gt),
            "psnr_y_output": psnr_y(out, gt),
            "ssim_y_output": ssim_y(out, gt),
        }
        report.metrics.update(scores)
        report.summary = (
            f"PSNR(Y) {scores['psnr_y_input']:.2f} → {scores['psnr_y_output']:.2f} dB, "
            f"SSIM(Y) {scores['ssim_y_input']:.4f} → {scores['ssim_y_output']:.4f} "
            f"({'synthetic ' + add_rain_kind + ' rain' if add_rain_kind else 'real rain'} vs its clean image)."
        )
    else:
        report.summary = "No ground truth for this image: output shown without scores."
    report.add_section("input | output" + (" | ground truth" if gt is not None else ""), " ".join(panels))
    report.metrics.update({"preset": preset, "scan_order": scan_order, "params": count_params(model)})
    report.metrics.update(device_provenance(dev, amp))
    report.data = {"train": blob["train"], "model": blob["model"], "height": img.shape[0], "width": img.shape[1]}
    progress(1.0, "done")
    return report
