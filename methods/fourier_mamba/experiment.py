"""FourierMamba runs: trained models kept for the jobs, one derain, and the reproduction (spec fourier_mamba §6, §7.5).

Trained networks for the jobs are cached as ``<cache_dir>/fourier_mamba/<preset>-<scan order>.pt``
(state dict + configs + loss history). The derain job uses the cached model of its preset and trains
it on first use; ``fourier_mamba.train`` (re)trains one explicitly. Images arrive by reference: an
uploaded file's SHA-256 in the artifact store, or a sample name (the 3 Rain100L pairs, china, flower).
Both jobs run on their params' ``device`` under ``amp`` (training, and the derain forward pass); the
cached model does not depend on where it was trained (saved from the CPU, loaded there, then moved).

The reproduction trains zigzag (and raster) models for several seeds on one fixed synthetic rain set
(the seeds vary the initialisation and the training crops), scores every held-out crop and every real
Rain100L pair, and hands the raw per-seed / per-crop values to :func:`report.reproduction_report`.
Each trained model is cached under ``<cache_dir>/fourier_mamba/runs/`` keyed by its configs, so a
rerun re-scores without retraining.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from scipy.ndimage import median_filter

from core.config import get_settings
from core.device import autocast, device_provenance, resolve_device
from core.jobs import JobContext, Report
from core.provenance import provenance_line
from methods.fourier_mamba.config import ModelConfig, Preset, TrainConfig, get_preset
from methods.fourier_mamba.data import add_rain, rain100l_pairs, sklearn_backgrounds
from methods.fourier_mamba.evaluate import derain_np, evaluate_crops, heldout_crops, score_pair, to_hwc
from methods.fourier_mamba.metrics import psnr_y, ssim_y
from methods.fourier_mamba.model import FourierMambaNet, count_params, derain_image
from methods.fourier_mamba.report import derain_report, reproduction_report
from methods.fourier_mamba.train import TrainResult, train_model, training_set

log = logging.getLogger(__name__)

SAMPLES = ("rain100l_1", "rain100l_2", "rain100l_3", "china", "flower")
MAX_SIDE = 640  # larger images are downscaled before deraining (the scan runs over every frequency)
RUN_VERSION = 1  # bump when training changes so cached reproduction runs are not reused


def _cache_root() -> Path:
    s = get_settings()
    return Path(s.cache_dir) if s.cache_dir else Path(s.home) / "cache"


def checkpoint_path(preset: str, scan_order: str) -> Path:
    return _cache_root() / "fourier_mamba" / f"{preset}-{scan_order}.pt"


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


def derain(
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
    scores = None
    if gt is not None:
        scores = {
            "psnr_y_input": psnr_y(img, gt),
            "ssim_y_input": ssim_y(img, gt),
            "psnr_y_output": psnr_y(out, gt),
            "ssim_y_output": ssim_y(out, gt),
        }
    report = derain_report(
        name,
        img,
        out,
        gt,
        scores,
        rain=add_rain_kind,
        meta={
            "preset": preset,
            "scan_order": scan_order,
            "params": count_params(model),
            **device_provenance(dev, amp),
        },
        data={"train": blob["train"], "model": blob["model"], "height": img.shape[0], "width": img.shape[1]},
    )
    progress(1.0, "done")
    return report


# --- the reproduction -------------------------------------------------------------------------------------


@dataclass
class CachedRun:
    """One trained reproduction model: the network (CPU), its loss history and training seconds."""

    model: FourierMambaNet
    losses: list[float]
    seconds: float
    cached: bool


def _run_path(model_cfg: ModelConfig, train_cfg: TrainConfig, data_seed: int) -> Path:
    train = train_cfg.to_dict()
    train.pop("device", None)  # a model is the same computation wherever it trained (amp stays in the key)
    train.pop("threads", None)
    blob = json.dumps(
        {"model": model_cfg.to_dict(), "train": train, "data_seed": data_seed, "v": RUN_VERSION}, sort_keys=True
    )
    return _cache_root() / "fourier_mamba" / "runs" / f"{hashlib.sha256(blob.encode()).hexdigest()[:16]}.pt"


def train_run(preset: Preset, scan_order: str, seed: int, data_seed: int, rs: Any, progress: JobContext) -> CachedRun:
    """The model of (preset, scan order, training seed) on the fixed rain set ``rs``: cached or trained now."""
    model_cfg = preset.with_model(scan_order=scan_order).model
    train_cfg = preset.with_train(seed=seed).train
    path = _run_path(model_cfg, train_cfg, data_seed)
    if path.is_file():
        model, blob = load_model(path)
        progress(1.0, f"{scan_order} seed {seed}: cached")
        return CachedRun(model, list(blob["losses"]), float(blob["seconds"]), True)
    result = train_model(model_cfg, train_cfg, get_settings().data_dir, progress=progress, rain_set=rs)
    if str(resolve_device(train_cfg.device)).split(":")[0] in ("cpu", "cuda"):  # not the tests' stand-ins
        save_model(result, train_cfg, path)
    return CachedRun(result.model, result.losses, result.seconds, False)


def _median_scores(xs: np.ndarray, ys: np.ndarray) -> list[Any]:
    """A 3×3 median filter per channel: the classic no-learning streak remover, for context."""
    out = []
    for i in range(len(xs)):
        x = to_hwc(xs[i])
        out.append(score_pair(f"crop{i}", x, to_hwc(ys[i]), median_filter(x, size=(3, 3, 1))))
    return out


def _crop_image(model: FourierMambaNet, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return to_hwc(derain_image(model, torch.from_numpy(x)))


def run_reproduction(
    preset: Preset,
    *,
    seeds: int,
    n_eval: int,
    eval_crop: int,
    ablation: bool,
    progress: JobContext,
    real_max_side: int = 0,
    command: str = "",
) -> Report:
    """Train zigzag (and raster) for ``seeds`` training seeds; score held-out crops and the real Rain100L pairs.

    The rain set and the held-out crops are fixed by ``preset.train.seed`` (the data seed); training seed
    ``s`` is ``data seed + s``. ``raw`` holds every crop's and pair's scores per (order, seed).
    """
    t_start = time.perf_counter()
    data_dir = Path(get_settings().data_dir)
    data_seed = preset.train.seed
    rs = training_set(preset.train, data_dir)
    orders = ["zigzag", "raster"] if ablation else ["zigzag"]
    train_seeds = [data_seed + s for s in range(seeds)]
    xs, ys = heldout_crops(rs, n_eval, eval_crop, data_seed)
    pairs = rain100l_pairs(data_dir)
    if real_max_side:
        pairs = [(n, fit_side(r, real_max_side), fit_side(c, real_max_side)) for n, r, c in pairs]
    median = _median_scores(xs, ys)
    raw: dict[str, Any] = {
        "seeds": train_seeds,
        "crops": {
            "psnr_in": [s.psnr_in for s in median],
            "ssim_in": [s.ssim_in for s in median],
            "median_psnr_out": [s.psnr_out for s in median],
            "median_ssim_out": [s.ssim_out for s in median],
        },
        "rain100l": {"names": [n for n, _, _ in pairs]},
    }
    pair_in = [score_pair(n, r, c, r) for n, r, c in pairs]
    raw["rain100l"]["psnr_in"] = [p.psnr_in for p in pair_in]
    raw["rain100l"]["ssim_in"] = [p.ssim_in for p in pair_in]
    runs: dict[str, list[dict[str, Any]]] = {o: [] for o in orders}
    models: dict[str, FourierMambaNet] = {}
    losses: dict[str, list[float]] = {}
    k, total = 0, len(orders) * len(train_seeds)
    for seed in train_seeds:
        for order in orders:
            sub = progress.sub(k / total * 0.95, (k + 1) / total * 0.95)
            k += 1
            run = train_run(preset, order, seed, data_seed, rs, sub.sub(0.0, 0.8))
            sub(0.8, f"{order} seed {seed}: scoring {len(xs)} held-out crops and {len(pairs)} real pairs")
            crop = evaluate_crops(run.model, xs, ys)
            real = [score_pair(n, r, c, derain_np(run.model, r)) for n, r, c in pairs]
            runs[order].append(
                {
                    "seed": seed,
                    "train_s": round(run.seconds, 1),
                    "cached": run.cached,
                    "final_loss": float(np.mean(run.losses[-10:])),
                    "crop_psnr_out": [s.psnr_out for s in crop],
                    "crop_ssim_out": [s.ssim_out for s in crop],
                    "real_psnr_out": [s.psnr_out for s in real],
                    "real_ssim_out": [s.ssim_out for s in real],
                }
            )
            if seed == data_seed:
                models[order] = run.model
                losses[order] = run.losses
                if order == "zigzag" and not run.cached:  # serves the derain job (as before the seeds)
                    save_model(
                        TrainResult(run.model, run.losses, run.seconds, rs),
                        preset.train,
                        checkpoint_path(preset.name, "zigzag"),
                    )
    raw.update(_per_seed(runs, raw))
    progress(0.96, "building the report")
    examples = []
    for i in range(min(4, len(xs))):
        examples.append([to_hwc(xs[i]), *[_crop_image(m, xs[i]) for m in models.values()], to_hwc(ys[i])])
    real_example = None
    if pairs:
        name, rainy, clean = pairs[0]
        real_example = (name, [rainy, *[derain_np(m, rainy) for m in models.values()], clean])
    info = {
        "command": command,
        "seconds": round(time.perf_counter() - t_start, 1),
        "machine": provenance_line(),
        "params": count_params(next(iter(models.values()))),
        "names": rs.names,
        "n_eval": len(xs),
        "eval_crop": eval_crop,
        "real_max_side": real_max_side,
        **device_provenance(preset.train.device, preset.train.amp),
    }
    report = reproduction_report(preset, raw, info, examples=examples, real_example=real_example, losses=losses)
    progress(1.0, "done")
    return report


def _per_seed(runs: dict[str, list[dict[str, Any]]], raw: dict[str, Any]) -> dict[str, Any]:
    """Per order: every run, the per-seed means (gain over the input, PSNR/SSIM out) and the per-crop / per-pair
    means over seeds — the lists the headlines read."""
    out: dict[str, Any] = {}
    crop_in = np.asarray(raw["crops"]["psnr_in"])
    real_in = np.asarray(raw["rain100l"]["psnr_in"])
    for order, rs in runs.items():
        crop = np.asarray([r["crop_psnr_out"] for r in rs])  # (seeds, crops)
        real = np.asarray([r["real_psnr_out"] for r in rs]) if rs and rs[0]["real_psnr_out"] else None
        entry: dict[str, Any] = {
            "runs": rs,
            "gain": [float(v) for v in (crop - crop_in).mean(axis=1)],
            "psnr_out": [float(v) for v in crop.mean(axis=1)],
            "ssim_out": [float(np.mean(r["crop_ssim_out"])) for r in rs],
            "train_s": [r["train_s"] for r in rs],
        }
        raw["crops"][f"{order}_psnr_out"] = [float(v) for v in crop.mean(axis=0)]
        if real is not None:
            entry["real_gain"] = [float(v) for v in (real - real_in).mean(axis=1)]
            raw["rain100l"][f"{order}_psnr_out"] = [float(v) for v in real.mean(axis=0)]
            raw["rain100l"][f"{order}_ssim_out"] = [
                float(v) for v in np.asarray([r["real_ssim_out"] for r in rs]).mean(axis=0)
            ]
        out[order] = entry
    return out
