"""A user's transformers/diffusers-style rectified-flow model behind :class:`~methods.rf_solver.edit.EditableModel`.

Any ``torch.nn.Module`` whose forward takes the latent as ``hidden_states`` plus a
``timestep`` (t ∈ [0, 1] times ``timestep_scale``) and returns a tensor, a tuple whose
first item is the velocity, or an object with ``.sample`` (diffusers' output classes)
fits. Conditioning is passed as keyword arguments from ``cond`` (a dict), and guidance,
for guidance-distilled models such as FLUX-dev, as the ``guidance_kwarg`` input.

V sharing needs the modules that produce V in the late blocks, e.g. diffusers FLUX's
``single_transformer_blocks.<i>.attn.to_v``; :func:`find_v_modules` collects them by a
name pattern. A forward hook on each calls the tap with the projection's output (V before
the head split, the same values), so the recorded/injected tensors are exactly V and
nothing else (Q and K come from other projections and are never touched).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from methods.rf_solver.model import AttentionTap
from methods.rf_solver.solver import VelocityFn


def find_v_modules(
    model: nn.Module, pattern: str = r"single_transformer_blocks\.(\d+)\.attn\.to_v$", min_block: int = 20
) -> dict[int, nn.Module]:
    """Modules whose qualified name matches ``pattern`` (group 1 = block id) with id ≥ ``min_block``.

    The default picks FLUX's single-stream blocks 20..37 as the reference implementation does.
    """
    rx = re.compile(pattern)
    found = {}
    for name, mod in model.named_modules():
        m = rx.search(name)
        if m and int(m.group(1)) >= min_block:
            found[int(m.group(1))] = mod
    return found


def _velocity_of(out: Any) -> torch.Tensor:
    if torch.is_tensor(out):
        return out
    if hasattr(out, "sample"):
        return out.sample
    if isinstance(out, (tuple, list)) and out and torch.is_tensor(out[0]):
        return out[0]
    raise TypeError(f"cannot read a velocity from {type(out).__name__}")


class ModuleVelocity:
    """Wraps a diffusers/transformers-style module as an editable rectified-flow velocity model."""

    def __init__(
        self,
        module: nn.Module,
        *,
        seq_len: int,
        v_modules: Mapping[int, nn.Module] | None = None,
        timestep_scale: float = 1.0,
        guidance_kwarg: str | None = None,
        extra_kwargs: Callable[[torch.Tensor], dict[str, Any]] | None = None,
    ) -> None:
        self.module = module.eval()
        self.seq_len = int(seq_len)
        self.v_modules = dict(v_modules or {})
        self.late_blocks = tuple(sorted(self.v_modules))
        self.timestep_scale = timestep_scale
        self.guidance_kwarg = guidance_kwarg
        self.extra_kwargs = extra_kwargs

    def velocity(self, cond: Any, guidance: float = 1.0, tap: AttentionTap | None = None) -> VelocityFn:
        """``cond`` is a dict of keyword inputs (e.g. encoder_hidden_states, pooled_projections)."""
        if guidance != 1.0 and self.guidance_kwarg is None:
            raise ValueError("this model takes no guidance input; use guidance 1")
        kwargs = dict(cond or {})

        @torch.no_grad()
        def v(z: torch.Tensor, t: float) -> torch.Tensor:
            b = z.shape[0]
            call = dict(kwargs)
            call["timestep"] = torch.full((b,), t * self.timestep_scale, dtype=z.dtype, device=z.device)
            if self.guidance_kwarg is not None:
                call[self.guidance_kwarg] = torch.full((b,), float(guidance), dtype=z.dtype, device=z.device)
            if self.extra_kwargs is not None:
                call.update(self.extra_kwargs(z))
            handles = []
            if tap is not None:
                for block_id, mod in self.v_modules.items():
                    handles.append(
                        mod.register_forward_hook(
                            lambda _m, _inp, out, bid=block_id: tap.on_qkv(bid, None, None, out)[2]
                        )
                    )
            try:
                return _velocity_of(self.module(hidden_states=z, **call))
            finally:
                for h in handles:
                    h.remove()

        return v
