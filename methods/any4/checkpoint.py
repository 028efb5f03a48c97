"""Save and reload quantized models (safetensors), so a reload never re-runs k-means.

A checkpoint directory holds:

- ``config.json``: the transformers model config;
- ``any4.json``: the quantization config, the list of quantized layers (name,
  shape, group size, bits, format, row/global LUT, bias) and free-form metadata;
- ``model.safetensors``: the whole state dict — the packed codes, LUTs and
  ``scales_and_zeros`` of every ``QuantLinear`` plus the untouched parameters
  (embeddings, norms, skipped layers); tied tensors are stored once.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import torch
from torch import nn

from methods.any4.modules import CpuMode, QuantLinear
from methods.any4.walker import _set_module

log = logging.getLogger(__name__)

META_FILE = "any4.json"
WEIGHTS_FILE = "model.safetensors"
FORMAT_VERSION = 1


def save_quantized(
    model: nn.Module, path: Path, *, quant_config: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None
) -> Path:
    """Write ``model`` (with its ``QuantLinear`` layers) to the directory ``path``."""
    import safetensors.torch

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    layers = [
        {
            "name": n,
            "in_features": m.in_features,
            "out_features": m.out_features,
            "group_size": m.group_size,
            "bits": m.bits,
            "fmt": m.fmt,
            "row_lut": m.row_lut,
            "bias": m.bias is not None,
        }
        for n, m in model.named_modules()
        if isinstance(m, QuantLinear)
    ]
    if not layers:
        raise ValueError("the model has no QuantLinear layer")
    if hasattr(model, "config"):
        model.config.save_pretrained(path)
    meta = {"version": FORMAT_VERSION, "quant_config": quant_config or {}, "layers": layers, "metadata": metadata or {}}
    (path / META_FILE).write_text(json.dumps(meta, indent=1))
    safetensors.torch.save_model(model, str(path / WEIGHTS_FILE))
    log.info("saved %d quantized layers to %s", len(layers), path)
    return path


def read_meta(path: Path) -> dict[str, Any]:
    """The ``any4.json`` of a checkpoint directory."""
    file = Path(path) / META_FILE
    if not file.exists():
        raise FileNotFoundError(f"{path} is not an any4 checkpoint (no {META_FILE})")
    meta = json.loads(file.read_text())
    if meta.get("version") != FORMAT_VERSION:
        raise ValueError(f"unsupported checkpoint version {meta.get('version')}")
    return meta


def load_quantized(
    path: Path, *, model: nn.Module | None = None, cpu_mode: CpuMode = "auto", device: str | torch.device = "cpu"
) -> tuple[nn.Module, dict[str, Any]]:
    """Rebuild a quantized model from ``path``; returns ``(model, meta)``.

    ``model`` may be an unquantized instance of the right architecture; by default
    one is built from ``config.json`` with ``AutoModelForCausalLM.from_config``.
    """
    import safetensors.torch

    path = Path(path)
    meta = read_meta(path)
    if model is None:
        from transformers import AutoConfig, AutoModelForCausalLM

        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(path))
    for spec in meta["layers"]:
        shell = QuantLinear(
            spec["in_features"],
            spec["out_features"],
            group_size=spec["group_size"],
            bits=spec["bits"],
            fmt=spec["fmt"],
            row_lut=spec["row_lut"],
            bias=spec["bias"],
            cpu_mode=cpu_mode,
        )
        _set_module(model, spec["name"], shell)
    missing, unexpected = safetensors.torch.load_model(model, str(path / WEIGHTS_FILE), strict=False)
    if unexpected or missing:
        raise ValueError(f"checkpoint does not match the model: missing {missing[:5]}, unexpected {unexpected[:5]}")
    model.eval()
    return model.to(device), meta
