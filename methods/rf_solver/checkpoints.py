"""The trained DiT as an artifact: weights + config under ``<cache_dir>/rf_solver/<preset>-<hash>/``.

A folder holds ``config.json`` (model config, training config, preset name, data),
``model.safetensors`` (EMA weights) and ``train.json`` (loss curve, seconds). The hash
covers both configs, so changing a preset retrains instead of loading stale weights.
Folders are written to a temporary name and renamed, so a crash never leaves half a model.
The hash does not cover the device: a model trained on a GPU serves CPU jobs and vice versa
(weights are stored from the CPU and loaded there, then moved).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from methods.rf_solver.config import DiTConfig, Preset, get_preset
from methods.rf_solver.model import RFDiT
from methods.rf_solver.train import data_sampler, train

log = logging.getLogger(__name__)


def preset_hash(preset: Preset) -> str:
    blob = json.dumps(
        {"model": preset.model.to_dict(), "train": preset.train.to_dict(), "data": preset.data}, sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def model_root(cache_dir: Path | None = None) -> Path:
    if cache_dir is None:
        from core.config import get_settings

        cache_dir = Path(get_settings().cache_dir)
    return Path(cache_dir) / "rf_solver"


def model_dir(preset: Preset, cache_dir: Path | None = None) -> Path:
    return model_root(cache_dir) / f"{preset.name}-{preset_hash(preset)}"


def save_model(model: RFDiT, preset: Preset, folder: Path, info: dict | None = None) -> Path:
    """Write weights, config and training info into ``folder`` atomically."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    config = {
        "preset": preset.name,
        "data": preset.data,
        "model": preset.model.to_dict(),
        "train": preset.train.to_dict(),
    }
    (tmp / "config.json").write_text(json.dumps(config, indent=2))
    (tmp / "train.json").write_text(json.dumps(info or {}, indent=2))
    save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp / "model.safetensors"))
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder


def load_model(folder: Path) -> tuple[RFDiT, dict]:
    """Load a saved model (eval mode) and its config dict."""
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    model = RFDiT(DiTConfig.from_dict(config["model"]))
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    return model.eval().requires_grad_(False), config


def get_model(
    preset: Preset | str = "digits",
    *,
    cache_dir: Path | None = None,
    train_if_missing: bool = True,
    callbacks: tuple[Callable[[int, float], None], ...] = (),
    device: Any = "cpu",
    amp: str = "off",
) -> tuple[RFDiT, Path]:
    """The trained model of ``preset`` on ``device``: loaded from the cache, or trained there now and saved."""
    from core.device import resolve_device

    dev = resolve_device(device)
    preset = get_preset(preset) if isinstance(preset, str) else preset
    folder = model_dir(preset, cache_dir)
    if (folder / "model.safetensors").exists():
        return load_model(folder)[0].to(dev), folder
    if not train_if_missing:
        raise FileNotFoundError(f"no trained {preset.name!r} model at {folder}; run `paperworks reproduce rf_solver`")
    log.info(
        "training the %s RF model (%d steps) on %s; it is saved to %s", preset.name, preset.train.steps, dev, folder
    )
    torch.manual_seed(preset.train.seed)
    result = train(preset.train, RFDiT(preset.model), data_sampler(preset), callbacks=callbacks, device=dev, amp=amp)
    save_model(result.model, preset, folder, {"losses": result.losses, "seconds": result.seconds, "device": str(dev)})
    return result.model, folder


def train_info(folder: Path) -> dict:
    return json.loads((Path(folder) / "train.json").read_text())
