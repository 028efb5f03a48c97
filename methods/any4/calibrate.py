"""Activation statistics from the single calibration prompt (spec §3.3).

Forward hooks sum each linear layer's input over every token; the **signed** mean
``x̄_k`` per input channel is what the any-formats' sample weights use (the
absolute value is taken later, after averaging: |mean|, not mean|·|).

- offline: one forward pass of the full-precision model, hooks on every layer;
- online: before quantizing a layer, one pass through the current (partly
  quantized) model with a hook on that layer only; the pass stops right after
  the hooked layer has seen its input (:class:`_StopForward`), since nothing
  later is needed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from torch import nn

log = logging.getLogger(__name__)

PROMPT_FILE = Path("any4_calibration") / "default_prompt.txt"


def read_default_prompt(data_dir: Path) -> str:
    """The byte-exact calibration prompt (``<data_dir>/any4_calibration/default_prompt.txt``)."""
    path = Path(data_dir) / PROMPT_FILE
    if not path.exists():
        raise FileNotFoundError(f"calibration prompt not found at {path}; pass the prompt text explicitly")
    return path.read_bytes().decode("utf-8")


class _StopForward(Exception):
    """Raised by a hook to end a calibration pass early."""


def collect_input_means(model: nn.Module, input_ids: torch.Tensor, modules: dict[str, nn.Module],
                        *, stop_after: str | None = None) -> dict[str, torch.Tensor]:
    """Signed per-channel mean of each named module's input over all tokens of one pass.

    Args:
        model: called as ``model(input_ids=...)``.
        input_ids: (1, T) or (B, T) token ids.
        modules: name → module to hook (its input is ``(..., K)``).
        stop_after: end the pass once this module has run (online calibration).
    Returns:
        name → (K,) float32 mean.
    """
    sums: dict[str, torch.Tensor] = {}
    counts: dict[str, int] = {}

    def hook(name: str):
        def fn(_mod: nn.Module, args: tuple, _out: torch.Tensor) -> None:
            x = args[0].detach().float().reshape(-1, args[0].shape[-1])
            sums[name] = sums.get(name, 0) + x.sum(dim=0)
            counts[name] = counts.get(name, 0) + x.shape[0]
            if name == stop_after:
                raise _StopForward
        return fn

    handles = [m.register_forward_hook(hook(n)) for n, m in modules.items()]
    try:
        with torch.no_grad():
            model(input_ids=input_ids.to(next(model.parameters()).device))
    except _StopForward:
        pass
    finally:
        for h in handles:
            h.remove()
    missing = set(modules) - set(sums)
    if missing:
        raise RuntimeError(f"calibration pass never reached {sorted(missing)[:3]}")
    return {n: (sums[n] / counts[n]).cpu() for n in modules}
