"""Activation statistics from the single calibration prompt (spec §3.3).

Forward hooks sum each linear layer's input over every token; the **signed** mean
``x̄_k`` per input channel is what the any-formats' sample weights use (the
absolute value is taken later, after averaging: |mean|, not mean|·|).

- offline: one forward pass of the full-precision model, hooks on every layer;
- online: before quantizing a layer, one pass through the current (partly
  quantized) model with a hook on that layer only. :class:`OnlineCalibrator`
  computes exactly that, cheaply: a layer inside a transformer block (an element
  of an ``nn.ModuleList``) only needs the block's input, which depends on the
  earlier, already quantized blocks alone. So the block's call arguments are
  captured once per block (a pass stopped at the block), and each of its layers
  is then calibrated by re-running just that block, stopped right after the
  layer (:class:`_StopForward`). Layers outside any block use a full pass.
"""

from __future__ import annotations

import inspect
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


def collect_input_means(
    model: nn.Module, input_ids: torch.Tensor, modules: dict[str, nn.Module], *, stop_after: str | None = None
) -> dict[str, torch.Tensor]:
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
            _run(model, input_ids)
    except _StopForward:
        pass
    finally:
        for h in handles:
            h.remove()
    missing = set(modules) - set(sums)
    if missing:
        raise RuntimeError(f"calibration pass never reached {sorted(missing)[:3]}")
    return {n: (sums[n] / counts[n]).cpu() for n in modules}


def _run(model: nn.Module, input_ids: torch.Tensor) -> None:
    """One forward pass; no KV cache, so captured block arguments can be replayed."""
    kwargs = {"input_ids": input_ids.to(next(model.parameters()).device)}
    if "use_cache" in inspect.signature(model.forward).parameters:
        kwargs["use_cache"] = False
    model(**kwargs)


def enclosing_block(model: nn.Module, name: str) -> str | None:
    """Name of the innermost ``nn.ModuleList`` element containing module ``name`` (e.g. ``model.layers.3``)."""
    parts = name.split(".")
    best = None
    for i in range(1, len(parts)):
        parent = model.get_submodule(".".join(parts[: i - 1])) if i > 1 else model
        if isinstance(getattr(parent, parts[i - 1], None), nn.ModuleList):
            best = ".".join(parts[: i + 1])
    return best if best != name else None


class OnlineCalibrator:
    """Per-layer input means through the current, partly quantized model (the online flow of §3.3).

    Call :meth:`means` for the layers in the order they are quantized; the block
    arguments captured for a block stay valid while its own layers are quantized,
    since they depend only on earlier blocks.
    """

    def __init__(self, model: nn.Module, input_ids: torch.Tensor) -> None:
        self.model = model
        self.input_ids = input_ids
        self._block: str | None = None
        self._args: tuple = ()
        self._kwargs: dict = {}

    def _capture(self, block_name: str) -> None:
        block = self.model.get_submodule(block_name)

        def pre(_mod: nn.Module, args: tuple, kwargs: dict) -> None:
            self._args, self._kwargs = args, kwargs
            raise _StopForward

        handle = block.register_forward_pre_hook(pre, with_kwargs=True)
        try:
            with torch.no_grad():
                _run(self.model, self.input_ids)
        except _StopForward:
            pass
        finally:
            handle.remove()
        self._block = block_name

    def means(self, name: str, layer: nn.Module) -> torch.Tensor:
        """Signed per-channel mean of ``layer``'s input, given everything quantized so far."""
        block_name = enclosing_block(self.model, name)
        if block_name is None:
            return collect_input_means(self.model, self.input_ids, {name: layer}, stop_after=name)[name]
        if block_name != self._block:
            self._capture(block_name)
        block = self.model.get_submodule(block_name)
        out: dict[str, torch.Tensor] = {}

        def hook(_mod: nn.Module, args: tuple, _o: torch.Tensor) -> None:
            x = args[0].detach().float().reshape(-1, args[0].shape[-1])
            out["mean"] = x.mean(dim=0).cpu()
            raise _StopForward

        handle = layer.register_forward_hook(hook)
        try:
            with torch.no_grad():
                block(*self._args, **self._kwargs)
        except _StopForward:
            pass
        finally:
            handle.remove()
        if "mean" not in out:
            raise RuntimeError(f"re-running {block_name} never reached {name}")
        return out["mean"]
