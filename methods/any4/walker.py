"""The model walker: swap every ``nn.Linear`` (except skipped ones) for a ``QuantLinear`` (spec §3.3, §3.4).

Layers are visited in ``named_modules`` order. Calibration (any-formats only):

- ``offline``: one forward pass of the full-precision model with hooks on every
  target layer, before anything is quantized;
- ``online``: before each layer, a pass through the current model, whose earlier
  layers are already quantized, hooked on that layer only (the reference flow).

Layer ℓ's k-means++ is seeded with ``cfg.seed + ℓ``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field

import torch
from torch import nn

from methods.any4.calibrate import OnlineCalibrator, collect_input_means
from methods.any4.config import QuantConfig
from methods.any4.modules import CpuMode, QuantLinear
from methods.any4.quantizers import create_quantizer

log = logging.getLogger(__name__)


@dataclass
class LayerStats:
    """Per-layer outcome: name, shape (N, K), weight MSE ‖W − Ŵ‖²/NK, storage bits per weight."""

    name: str
    out_features: int
    in_features: int
    weight_mse: float
    bits_per_weight: float


@dataclass
class QuantizationSummary:
    """What :func:`quantize_model` did."""

    config: dict
    layers: list[LayerStats] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n_weights(self) -> int:
        return sum(s.out_features * s.in_features for s in self.layers)

    @property
    def weight_mse(self) -> float:
        """MSE over all quantized weights (each layer weighted by its size)."""
        n = self.n_weights
        return sum(s.weight_mse * s.out_features * s.in_features for s in self.layers) / n if n else 0.0

    @property
    def bits_per_weight(self) -> float:
        n = self.n_weights
        return sum(s.bits_per_weight * s.out_features * s.in_features for s in self.layers) / n if n else 0.0

    def to_dict(self) -> dict:
        return {
            "config": self.config,
            "layers": [asdict(s) for s in self.layers],
            "skipped": self.skipped,
            "seconds": self.seconds,
            "weight_mse": self.weight_mse,
            "bits_per_weight": self.bits_per_weight,
        }


def is_skipped(name: str, skip: tuple[str, ...]) -> bool:
    """A layer is skipped when a skip entry equals its name, its last component, or a suffix of it."""
    return any(name == s or name.endswith("." + s) or name.split(".")[-1] == s for s in skip)


def linear_layers(model: nn.Module, skip: tuple[str, ...] = ()) -> tuple[list[tuple[str, nn.Linear]], list[str]]:
    """(targets, skipped): every ``nn.Linear`` in ``named_modules`` order."""
    targets, skipped = [], []
    for name, mod in model.named_modules():
        if type(mod) is nn.Linear:
            (skipped if is_skipped(name, skip) else targets).append((name, mod))
    return targets, [n for n, _ in skipped]


def _set_module(model: nn.Module, name: str, new: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, new)


def quantize_model(
    model: nn.Module,
    cfg: QuantConfig,
    *,
    calib_ids: torch.Tensor | None = None,
    progress=None,
    cpu_mode: CpuMode = "auto",
) -> QuantizationSummary:
    """Quantize ``model`` in place and return per-layer statistics.

    Args:
        model: a causal LM (or any module with ``nn.Linear`` children).
        cfg: the format and its settings.
        calib_ids: (1, T) token ids of the calibration prompt; required when
            ``cfg.uses_calibration``.
        progress: optional ``JobContext``-like callable ``(fraction, message)``.
        cpu_mode: the CPU path of the new layers.
    """
    t0 = time.perf_counter()
    targets, skipped = linear_layers(model, cfg.skip_modules)
    if not targets:
        raise ValueError("no nn.Linear layer to quantize")
    if cfg.uses_calibration and calib_ids is None:
        raise ValueError(f"{cfg.label()} needs calibration token ids")
    quantizer = create_quantizer(cfg)
    means: dict[str, torch.Tensor] = {}
    online = OnlineCalibrator(model, calib_ids) if cfg.uses_calibration and cfg.calibration == "online" else None
    if cfg.uses_calibration and cfg.calibration == "offline":
        means = collect_input_means(model, calib_ids, dict(targets))
    summary = QuantizationSummary(config=cfg.to_dict(), skipped=skipped)
    for idx, (name, layer) in enumerate(targets):
        sample_weight = None
        if cfg.uses_calibration:
            if online is not None:
                sample_weight = online.means(name, layer)
            else:
                sample_weight = means[name]
        w = layer.weight.detach().float().cpu()
        qw = quantizer.quantize(w, cfg.group_size, sample_weight=sample_weight, seed=cfg.seed + idx)
        new = QuantLinear.from_quantized(qw, layer.bias, cpu_mode=cpu_mode).to(layer.weight.device)
        _set_module(model, name, new)
        mse = float(((qw.dequantize() - w) ** 2).mean())
        summary.layers.append(LayerStats(name, qw.shape[0], qw.shape[1], mse, qw.bits_per_weight()))
        if progress is not None:
            progress((idx + 1) / len(targets), f"{cfg.label()}: {idx + 1}/{len(targets)} layers")
    summary.seconds = time.perf_counter() - t0
    log.info(
        "%s g=%d: %d layers in %.1fs, weight MSE %.3g, %.3f bits/weight",
        cfg.label(),
        cfg.group_size,
        len(summary.layers),
        summary.seconds,
        summary.weight_mse,
        summary.bits_per_weight,
    )
    return summary


def replace_with_dense(model: nn.Module) -> nn.Module:
    """Turn every ``QuantLinear`` back into an ``nn.Linear`` holding Ŵ (in place)."""
    for name, mod in list(model.named_modules()):
        if isinstance(mod, QuantLinear):
            dense = nn.Linear(mod.in_features, mod.out_features, bias=mod.bias is not None)
            with torch.no_grad():
                dense.weight.copy_(mod.dequantized_weight())
                if mod.bias is not None:
                    dense.bias.copy_(mod.bias)
            _set_module(model, name, dense.to(mod.packed.device))
    return model
