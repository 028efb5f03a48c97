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
from methods.rf_solver.vcache import CfgHalves, Keying, VCache, VSharing

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

    @property
    def device(self) -> torch.device:
        """Where the model is (the studies move their images there and bring the results back)."""
        return next(self.model.parameters()).device

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


def later_half(blocks: Sequence[int]) -> tuple[int, ...]:
    """FLUX's choice scaled down: of n single-stream blocks, those with position > n/2 (FLUX: 20..37 of 0..37).

    At least the last block (n = 2 would otherwise leave none).
    """
    blocks = tuple(sorted(blocks))
    return tuple(b for i, b in enumerate(blocks) if i > len(blocks) / 2) or blocks[-1:]


def resolve_blocks(model: EditableModel, blocks: Sequence[int] | str | None) -> tuple[int, ...]:
    """``None``/"all" → every late single-stream block; "later_half" → :func:`later_half`; or explicit ids."""
    if blocks is None or blocks == "all":
        return tuple(model.late_blocks)
    if blocks == "later_half":
        return later_half(model.late_blocks)
    if isinstance(blocks, str):
        raise ValueError(f"blocks must be 'all', 'later_half' or a list of block ids, not {blocks!r}")
    return tuple(int(b) for b in blocks)


def _record_endpoint(model: EditableModel, source: Any, rec: VSharing, z1: torch.Tensor, t1: float) -> int:
    """``keying="eval"``: one recording-only evaluation at the inverted noise, t = 1 (+1 NFE)."""
    rec.arm(t1, 0)
    try:
        model.velocity(source, 1.0, rec)(z1, t1)
    finally:
        rec.disarm()
    return 1


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
    blocks: Sequence[int] | str | None = None,
    keying: Keying = "interval",
    cfg_halves: CfgHalves = "both",
) -> EditResult:
    """RF-Edit one batch of images from ``source`` to ``target`` condition (spec §3.5).

    ``blocks`` ("all" late single-stream blocks by default, "later_half", or ids), ``keying``
    and ``cfg_halves`` are ablation options (see :mod:`methods.rf_solver.vcache`); their
    defaults are the spec's configuration.
    """
    if not 0 <= inject_k <= num_steps:
        raise ValueError("inject_k must be in [0, num_steps]")
    ts = schedule_for(model, num_steps, shift)
    with VCache(resolve_blocks(model, blocks), offload_dir) as cache:
        rec = VSharing(cache, inject_k, "record", keying=keying)
        inv = invert(model.velocity(source, 1.0, rec), x0, ts, order, hooks=[rec])
        extra = _record_endpoint(model, source, rec, inv.z, ts[0]) if keying == "eval" and inject_k > 0 else 0
        n_cached, nbytes = len(cache), cache.nbytes
        inj = VSharing(cache, inject_k, "inject", cfg_halves=cfg_halves)
        out = sample(model.velocity(target, guidance, inj), inv.z, ts, order, hooks=[inj])
    log.debug("edit: %d V tensors (%.1f MB) cached and freed", n_cached, nbytes / 1e6)
    return EditResult(
        source=x0,
        noise=inv.z,
        edited=out.z,
        nfe=inv.nfe + out.nfe + extra,
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
    blocks: Sequence[int] | str | None = None,
    keying: Keying = "interval",
    variants: Sequence[tuple[CfgHalves, float]] | None = None,
) -> dict[Any, torch.Tensor]:
    """Edits for several k from one inversion: V is recorded for k_max steps, each k injects a prefix.

    Equal to calling :func:`rf_edit` per k (inversion does not depend on k); cheaper. Without
    ``variants`` the result is ``{k: edited}`` at ``guidance`` with V fed to both guidance
    halves. With ``variants``, a list of (cfg_halves, guidance) ablations sharing the
    inversion, it is ``{(k, cfg_halves, guidance): edited}``; k = 0 (no injection) is
    sampled once per guidance.
    """
    ts = schedule_for(model, num_steps, shift)
    k_max = max(ks)
    out: dict[Any, torch.Tensor] = {}
    with VCache(resolve_blocks(model, blocks)) as cache:
        rec = VSharing(cache, k_max, "record", keying=keying)
        z1 = invert(model.velocity(source, 1.0, rec), x0, ts, order, hooks=[rec]).z
        if keying == "eval" and k_max > 0:
            _record_endpoint(model, source, rec, z1, ts[0])
        no_inject: dict[float, torch.Tensor] = {}
        for half, g in variants or [("both", guidance)]:
            for k in ks:
                if k == 0 and g in no_inject:
                    x = no_inject[g]
                else:
                    inj = VSharing(cache, k, "inject", cfg_halves=half)
                    x = sample(model.velocity(target, g, inj), z1, ts, order, hooks=[inj]).z
                    if k == 0:
                        no_inject[g] = x
                out[(k, half, g) if variants is not None else k] = x
    return out
