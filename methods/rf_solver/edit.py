"""RF-Edit and reconstruction on any conditional rectified-flow model (spec §3.4–§3.5).

A model plugs in through :class:`EditableModel`: ``velocity(cond, guidance, tap)`` returns
the ``v(z, t)`` the solver integrates, with an attention tap for V sharing, and the model
names its late blocks (where V is shared) and token count (the schedule's L).

* Reconstruction: invert with condition c at guidance 1, sample back with c, no injection.
* Edit: invert with the source condition at guidance 1 while recording V in the late blocks
  during the last k inversion steps; sample from the inverted noise with the target
  condition at guidance g, injecting the recorded V in the first k denoising steps.
  The cache is freed when the edit returns.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch

from methods.rf_solver.model import AttentionTap, RFDiT
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.solver import VelocityFn, invert, sample
from methods.rf_solver.vcache import VCache, VSharing

log = logging.getLogger(__name__)


class EditableModel(Protocol):
    """What RF-Edit needs from a conditional velocity model."""

    seq_len: int
    late_blocks: tuple[int, ...]

    def velocity(self, cond: Any, guidance: float = 1.0, tap: AttentionTap | None = None) -> VelocityFn: ...


class DiTVelocity:
    """The project's :class:`RFDiT` behind :class:`EditableModel`; guidance is classifier-free.

    FLUX-dev takes guidance as an input (it is guidance-distilled); our tiny model is trained
    with label dropout instead, so guidance g ≠ 1 evaluates the null and the target label in
    one doubled batch and returns v_∅ + g·(v_c − v_∅). One such evaluation counts as one NFE.
    """

    def __init__(self, model: RFDiT) -> None:
        self.model = model.eval()
        self.seq_len = model.cfg.tokens
        self.late_blocks = model.cfg.single_blocks

    def labels(self, cond: Any, batch: int) -> torch.Tensor:
        """Label names, indices or a tensor → a (batch,) long tensor."""
        names = self.model.cfg.labels
        if torch.is_tensor(cond):
            y = cond.long().reshape(-1)
        else:
            items = cond if isinstance(cond, (list, tuple)) else [cond]
            y = torch.tensor([names.index(c) if isinstance(c, str) else int(c) for c in items], dtype=torch.long)
        if y.numel() == 1:
            y = y.expand(batch)
        if y.numel() != batch or bool(((y < 0) | (y > self.model.cfg.null_label)).any()):
            raise ValueError("one valid label per image is required")
        return y

    def velocity(self, cond: Any, guidance: float = 1.0, tap: AttentionTap | None = None) -> VelocityFn:
        model, null = self.model, self.model.cfg.null_label

        @torch.no_grad()
        def v(z: torch.Tensor, t: float) -> torch.Tensor:
            y = self.labels(cond, z.shape[0]).to(z.device)
            if guidance == 1.0:
                return model(z, t, y, tap)
            out = model(torch.cat([z, z]), t, torch.cat([torch.full_like(y, null), y]), tap)
            v_null, v_cond = out.chunk(2)
            return v_null + guidance * (v_cond - v_null)

        return v


@dataclass
class EditResult:
    """An edit and what it cost."""

    source: torch.Tensor
    noise: torch.Tensor
    edited: torch.Tensor
    nfe: int
    timesteps: list[float]
    cached_tensors: int
    cache_bytes: int
    injected: list[tuple[str, int, bool, int]] = field(default_factory=list)
    recorded: list[tuple[str, int, bool, int]] = field(default_factory=list)
    missing_keys: int = 0


def schedule_for(model: EditableModel, num_steps: int, shift: bool = True) -> list[float]:
    return get_schedule(num_steps, model.seq_len, shift)


def reconstruct_image(
    model: EditableModel, x0: torch.Tensor, cond: Any, num_steps: int, order: int = 2, shift: bool = True
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Invert then sample with the same condition at guidance 1, no injection: (x_rec, noise, nfe)."""
    ts = schedule_for(model, num_steps, shift)
    v = model.velocity(cond, 1.0)
    inv = invert(v, x0, ts, order)
    out = sample(v, inv.z, ts, order)
    return out.z, inv.z, inv.nfe + out.nfe


def rf_edit(
    model: EditableModel,
    x0: torch.Tensor,
    source: Any,
    target: Any,
    *,
    num_steps: int = 15,
    inject_k: int = 2,
    order: int = 2,
    guidance: float = 2.0,
    shift: bool = True,
    offload_dir: Path | None = None,
    blocks: Sequence[int] | None = None,
) -> EditResult:
    """RF-Edit one batch of images from ``source`` to ``target`` condition (spec §3.5)."""
    if not 0 <= inject_k <= num_steps:
        raise ValueError("inject_k must be in [0, num_steps]")
    ts = schedule_for(model, num_steps, shift)
    with VCache(model.late_blocks if blocks is None else blocks, offload_dir) as cache:
        rec = VSharing(cache, inject_k, "record")
        inv = invert(model.velocity(source, 1.0, rec), x0, ts, order, hooks=[rec])
        n_cached, nbytes = len(cache), cache.nbytes
        inj = VSharing(cache, inject_k, "inject")
        out = sample(model.velocity(target, guidance, inj), inv.z, ts, order, hooks=[inj])
    log.debug("edit: %d V tensors (%.1f MB) cached and freed", n_cached, nbytes / 1e6)
    return EditResult(
        source=x0,
        noise=inv.z,
        edited=out.z,
        nfe=inv.nfe + out.nfe,
        timesteps=ts,
        cached_tensors=n_cached,
        cache_bytes=nbytes,
        injected=inj.events,
        recorded=rec.events,
    )


def edit_sweep(
    model: EditableModel,
    x0: torch.Tensor,
    source: Any,
    target: Any,
    ks: Sequence[int],
    *,
    num_steps: int = 15,
    order: int = 2,
    guidance: float = 2.0,
    shift: bool = True,
) -> dict[int, torch.Tensor]:
    """Edits for several k from one inversion: V is recorded for k_max steps, each k injects a prefix.

    Equal to calling :func:`rf_edit` per k (inversion does not depend on k); cheaper.
    """
    ts = schedule_for(model, num_steps, shift)
    k_max = max(ks)
    out: dict[int, torch.Tensor] = {}
    with VCache(model.late_blocks) as cache:
        rec = VSharing(cache, k_max, "record")
        z1 = invert(model.velocity(source, 1.0, rec), x0, ts, order, hooks=[rec]).z
        for k in ks:
            inj = VSharing(cache, k, "inject")
            out[k] = sample(model.velocity(target, guidance, inj), z1, ts, order, hooks=[inj]).z
    return out
