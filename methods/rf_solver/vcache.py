"""RF-Edit's V cache: record V during inversion, inject it in the first k denoising steps (spec §3.5).

Keys are written out explicitly, never left to loop variables:

    key = (upper_t, is_midpoint, block_id)

* ``upper_t`` is the upper end t_j of the interval [t_{j+1}, t_j]. Inversion step i walks
  t_{N−i} → t_{N−i−1}; it is mirrored to denoising step j = N−1−i and keyed by t_j (its
  end time), while denoising step j starts at t_j and is keyed by t_j too. Hence V computed
  during inversion at the interval's low time is injected at its high time; midpoint
  evaluations meet at the same t_mid.
* ``is_midpoint`` is the paper's ``second_order`` flag (main vs midpoint evaluation).
* ``block_id`` is one of the late single-stream blocks.

Injection happens iff denoising step j < k; inversion therefore stores V during its last k
steps (the same intervals).

Two ablation options (the spec's behaviour is the default of each):

* ``keying="eval"`` keys V by the time it was *evaluated* at instead of the interval's
  upper end: a denoising main evaluation at t_j receives the V that inversion computed at
  t_j (the start of the mirrored step j−1; for t_0 = 1, one extra recording-only
  evaluation at the inverted noise, +1 NFE). Midpoints are unchanged (they already meet).
* ``cfg_halves="cond"`` replaces V only in the conditional half of a classifier-free-guidance
  batch (``[null ; conditional]``, the order :class:`~methods.rf_solver.edit.DiTVelocity`
  uses); ``"both"`` (default) feeds the source V to both halves. That is 2·k·len(blocks) tensors for RF-Solver-2 and k·len(blocks)
for Euler. Only V is replaced; q and k are passed through untouched. Tensors live in CPU
memory or, with ``offload_dir``, on disk; :meth:`VCache.clear` frees them after each edit.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import torch

from methods.rf_solver.solver import EvalInfo

log = logging.getLogger(__name__)

CacheKey = tuple[float, bool, int]
Mode = Literal["record", "inject", "off"]
Keying = Literal["interval", "eval"]
CfgHalves = Literal["both", "cond"]
KEYINGS: tuple[str, ...] = ("interval", "eval")
CFG_HALVES: tuple[str, ...] = ("both", "cond")


class VCache:
    """Storage for V tensors keyed by (upper_t, is_midpoint, block_id)."""

    def __init__(self, blocks: Iterable[int], offload_dir: Path | None = None) -> None:
        self.blocks = frozenset(int(b) for b in blocks)
        self._mem: dict[CacheKey, torch.Tensor] = {}
        self._disk: dict[CacheKey, Path] = {}
        self._dir: Path | None = None
        if offload_dir is not None:
            Path(offload_dir).mkdir(parents=True, exist_ok=True)
            self._dir = Path(tempfile.mkdtemp(dir=offload_dir, prefix="vcache-"))
        self.nbytes = 0
        self.peak_nbytes = 0

    @property
    def offloaded(self) -> bool:
        return self._dir is not None

    def put(self, key: CacheKey, v: torch.Tensor) -> None:
        v = v.detach().to("cpu", copy=True)
        if key in self:
            raise KeyError(f"V already cached for {key}")
        if self._dir is not None:
            path = self._dir / f"{len(self._disk):06d}.pt"
            torch.save(v, path)
            self._disk[key] = path
        else:
            self._mem[key] = v
        self.nbytes += v.numel() * v.element_size()
        self.peak_nbytes = max(self.peak_nbytes, self.nbytes)

    def get(self, key: CacheKey) -> torch.Tensor:
        if key in self._mem:
            return self._mem[key]
        if key in self._disk:
            return torch.load(self._disk[key], weights_only=True)
        raise KeyError(f"no cached V for key {key}")

    def __contains__(self, key: object) -> bool:
        return key in self._mem or key in self._disk

    def keys(self) -> list[CacheKey]:
        return [*self._mem, *self._disk]

    def __len__(self) -> int:
        return len(self._mem) + len(self._disk)

    def clear(self) -> None:
        """Free every cached tensor (memory and offload files)."""
        self._mem.clear()
        self._disk.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir.mkdir(parents=True, exist_ok=True)
        self.nbytes = 0

    def close(self) -> None:
        self.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> VCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def inject_mask(num_steps: int, inject_k: int) -> list[bool]:
    """``inject_list`` indexed by denoising step: [True]·k + [False]·(N−k)."""
    k = max(0, min(inject_k, num_steps))
    return [True] * k + [False] * (num_steps - k)


class VSharing:
    """Solver hook + attention tap that records (inversion) or injects (denoising) V.

    Use one instance per solve: ``mode="record"`` for the inversion, ``mode="inject"``
    for the denoising pass, both with the same ``inject_k`` and cache.
    """

    def __init__(
        self, cache: VCache, inject_k: int, mode: Mode, *, keying: Keying = "interval", cfg_halves: CfgHalves = "both"
    ) -> None:
        if keying not in KEYINGS:
            raise ValueError(f"keying must be one of {KEYINGS}")
        if cfg_halves not in CFG_HALVES:
            raise ValueError(f"cfg_halves must be one of {CFG_HALVES}")
        self.cache, self.inject_k, self.mode = cache, int(inject_k), mode
        self.keying, self.cfg_halves = keying, cfg_halves
        self._key_time: tuple[float, bool] | None = None
        self._step = -1
        self.events: list[tuple[str, int, bool, int]] = []  # (mode, denoise_step, is_midpoint, block)
        self.missing: list[CacheKey] = []

    # --- SolverHook ---------------------------------------------------------------
    def before_eval(self, info: EvalInfo) -> None:
        if info.stage > 1 and self.mode != "off":
            raise ValueError("V sharing is defined for orders 1 and 2 (main and midpoint evaluations)")
        mask = inject_mask(info.num_steps, self.inject_k)
        if self.keying == "eval" and self.mode == "record" and not info.is_midpoint:
            # an inversion main evaluation at t_{j+1} is what denoising step j+1 evaluates at
            step = info.denoise_step + 1 if info.direction == "invert" else info.denoise_step
            active = step < info.num_steps and mask[step]
            self._key_time = (info.t, False) if active else None
            self._step = step
            return
        active = self.mode != "off" and mask[info.denoise_step]
        self._key_time = (info.upper_t, info.is_midpoint) if active else None
        self._step = info.denoise_step

    def arm(self, t: float, step: int = 0) -> None:
        """Record (or inject) at the next evaluation, keyed (t, main): ``keying="eval"``'s extra t = 1 evaluation."""
        self._key_time, self._step = (float(t), False), int(step)

    def disarm(self) -> None:
        self._key_time = None

    # --- AttentionTap -------------------------------------------------------------
    def on_qkv(
        self, block_id: int, q: torch.Tensor | None, k: torch.Tensor | None, v: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor]:
        if self._key_time is None or block_id not in self.cache.blocks:
            return q, k, v
        key: CacheKey = (self._key_time[0], self._key_time[1], block_id)
        self.events.append((self.mode, self._step, key[1], block_id))
        if self.mode == "record":
            self.cache.put(key, v)
            return q, k, v
        src = self.cache.get(key).to(v.device, v.dtype)
        if src.shape != v.shape:
            reps = v.shape[0] // src.shape[0]
            if reps * src.shape[0] != v.shape[0] or src.shape[1:] != v.shape[1:]:
                raise ValueError(f"cached V {tuple(src.shape)} does not fit {tuple(v.shape)}")
            if self.cfg_halves == "cond":  # [null ; conditional]: the null half keeps its own V
                return q, k, torch.cat([v[: v.shape[0] - src.shape[0]], src])
            src = src.repeat(reps, *([1] * (v.ndim - 1)))  # classifier-free guidance doubles the batch
        return q, k, src
