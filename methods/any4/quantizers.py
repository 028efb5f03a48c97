"""The quantizers: group normalization, int-b, nf4, fp4 and any-b (spec §3.1–3.5).

Each quantizer is a class with one verb, ``quantize(W, group_size, sample_weight=None,
seed=0) -> QuantizedWeight``; :func:`create_quantizer` builds one from a
:class:`~methods.any4.config.QuantConfig`.
"""

from __future__ import annotations

import logging

import torch

from methods.any4.config import QuantConfig
from methods.any4.grids import FP4_GRID, NF4_GRID, fp4_codes, nf4_codes
from methods.any4.kmeans import SortedRows, kmeans_plusplus, random_init, weighted_lloyd
from methods.any4.quantized import QuantizedWeight, pad_lut

log = logging.getLogger(__name__)

#: The kernel convention centres codes by 8 for every bit width (§3.1): ŵ = (c − 8)·s + (m + 8s).
CENTRE = 8.0
#: Rows per k-means chunk are chosen so a chunk holds about this many points.
_POINTS_PER_CHUNK = 1 << 20


def _check(w: torch.Tensor, group_size: int) -> torch.Tensor:
    if w.dim() != 2:
        raise ValueError(f"weight must be 2-D (N, K), got {tuple(w.shape)}")
    if w.shape[1] % group_size:
        raise ValueError(f"K={w.shape[1]} is not a multiple of group_size={group_size}")
    return w.detach().float()


def group_normalize(w: torch.Tensor, group_size: int, bits: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Min/max group normalization (§3.1).

    For row i and group j: ``s_ij = max(M_ij − m_ij, 1e-6) / (2^b − 1)`` and
    ``u_ik = (w_ik − m_ij) / s_ij ∈ [0, 2^b − 1]`` (not rounded).
    Returns ``u`` (N, K), ``s`` (N, K/g), ``m`` (N, K/g).
    """
    w = _check(w, group_size)
    n, k = w.shape
    top = 2**bits - 1
    grouped = w.view(n, k // group_size, group_size)
    lo = grouped.amin(dim=2)
    hi = grouped.amax(dim=2)
    s = (hi - lo).clamp_min(1e-6) / top
    u = ((grouped - lo[..., None]) / s[..., None]).clamp_(0.0, float(top))
    return u.reshape(n, k), s, lo


class IntQuantizer:
    """Asymmetric min–max int-b (``intq``): ``q = round(u)``, ``ŵ = q·s + m`` (§3.5)."""

    def __init__(self, bits: int = 4) -> None:
        self.bits = bits

    def quantize(
        self, w: torch.Tensor, group_size: int, sample_weight: torch.Tensor | None = None, seed: int = 0
    ) -> QuantizedWeight:
        u, s, m = group_normalize(w, group_size, self.bits)
        codes = u.round().to(torch.uint8)
        lut = pad_lut(torch.arange(2**self.bits, dtype=torch.float32) - CENTRE)
        return QuantizedWeight(f"int{self.bits}", self.bits, group_size, codes, lut, s, m + CENTRE * s)


class AbsmaxGridQuantizer:
    """nf4 / fp4: absmax per block of g along K, nearest point of a fixed grid (§3.5)."""

    def __init__(self, fmt: str) -> None:
        if fmt not in ("nf4", "fp4"):
            raise ValueError(fmt)
        self.fmt = fmt
        self.bits = 4
        self.grid = NF4_GRID if fmt == "nf4" else FP4_GRID

    def quantize(
        self, w: torch.Tensor, group_size: int, sample_weight: torch.Tensor | None = None, seed: int = 0
    ) -> QuantizedWeight:
        w = _check(w, group_size)
        n, k = w.shape
        grouped = w.view(n, k // group_size, group_size)
        absmax = grouped.abs().amax(dim=2)
        scale = torch.where(absmax > 0, absmax, torch.ones_like(absmax))
        x = (grouped / scale[..., None]).reshape(n, k)
        codes = (nf4_codes(x) if self.fmt == "nf4" else fp4_codes(x)).to(torch.uint8)
        lut = torch.tensor(self.grid, dtype=torch.float32)
        return QuantizedWeight(self.fmt, 4, group_size, codes, lut, scale, torch.zeros_like(scale))


class AnyQuantizer:
    """any-b: per-row learned LUT by weighted 1-D k-means on the normalized row (§3.2).

    Sample weights ``ω_ik = |x̄_k| · s_{i,group(k)}`` when a calibration mean x̄ is
    given (the scale factor only with ``scale_sample_weight``), else all 1.
    """

    def __init__(
        self,
        bits: int = 4,
        *,
        init: str = "kmeans++",
        max_iter: int = 100,
        tol: float = 1e-4,
        scale_sample_weight: bool = True,
        threads: int | None = 1,
    ) -> None:
        if init == "nf4" and bits != 4:
            raise ValueError("the nf4 init needs 4 bits")
        self.bits = bits
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.scale_sample_weight = scale_sample_weight
        # The k-means is a long chain of small ops; with shared cores, waking a second
        # OpenMP thread costs more than the op (measured on the 2-core dev machine under
        # load: a small batched searchsorted took 26 ms with 2 threads, 6 µs with 1).
        self.threads = threads

    def sample_weights(
        self, sample_weight: torch.Tensor | None, s: torch.Tensor, group_size: int, shape: tuple[int, int]
    ) -> torch.Tensor:
        """ω (N, K): |x̄_k| (× s_ij), or ones without calibration."""
        if sample_weight is None:
            return torch.ones(shape)
        xbar = sample_weight.detach().float().abs().flatten()
        if xbar.numel() != shape[1]:
            raise ValueError(f"sample_weight has {xbar.numel()} entries, expected K={shape[1]}")
        omega = xbar[None, :].expand(shape)
        if self.scale_sample_weight:
            omega = omega * s.repeat_interleave(group_size, dim=1)
        return omega.contiguous()

    def _init(self, rows: SortedRows, gen: torch.Generator) -> torch.Tensor:
        k = 2**self.bits
        n = rows.shape[0]
        if self.init == "kmeans++":
            return kmeans_plusplus(rows, k, gen)
        if self.init == "random":
            return random_init(rows, k, gen)
        if self.init == "int":
            return torch.linspace(0, k - 1, k).expand(n, k).clone()
        if self.init == "nf4":
            grid = (torch.tensor(NF4_GRID) + 1) / 2 * (k - 1)
            return grid.expand(n, k).clone()
        raise ValueError(f"unknown init {self.init!r}")

    def quantize(
        self, w: torch.Tensor, group_size: int, sample_weight: torch.Tensor | None = None, seed: int = 0
    ) -> QuantizedWeight:
        u, s, m = group_normalize(w, group_size, self.bits)
        omega = self.sample_weights(sample_weight, s, group_size, tuple(u.shape))
        gen = torch.Generator().manual_seed(int(seed))
        n, k = u.shape
        chunk = max(1, _POINTS_PER_CHUNK // k)
        cents, codes = [], []
        prev_threads = torch.get_num_threads()
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            for r0 in range(0, n, chunk):
                rows = SortedRows(u[r0 : r0 + chunk], omega[r0 : r0 + chunk])
                res = weighted_lloyd(
                    rows, self._init(rows, gen), max_iter=self.max_iter, tol=self.tol * (2**self.bits - 1)
                )
                cents.append(res.centroids)
                codes.append(res.codes.to(torch.uint8))
        finally:
            torch.set_num_threads(prev_threads)
        lut = pad_lut(torch.cat(cents) - CENTRE)
        return QuantizedWeight(f"any{self.bits}", self.bits, group_size, torch.cat(codes), lut, s, m + CENTRE * s)


Quantizer = IntQuantizer | AbsmaxGridQuantizer | AnyQuantizer


def create_quantizer(cfg: QuantConfig) -> Quantizer:
    """The quantizer a :class:`QuantConfig` names."""
    if cfg.family == "int":
        return IntQuantizer(cfg.bits)
    if cfg.family in ("nf4", "fp4"):
        return AbsmaxGridQuantizer(cfg.family)
    return AnyQuantizer(
        cfg.bits, init=cfg.init, max_iter=cfg.max_iter, tol=cfg.tol, scale_sample_weight=cfg.scale_sample_weight
    )
