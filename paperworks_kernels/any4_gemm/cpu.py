"""The fused CPU path of the any4 GEMM: packed codes, LUT and group scales straight to ``x @ Ŵᵀ``.

Calls the C++ kernel of :mod:`paperworks_kernels.cpu` (``src/any4_gemm.cpp``): the weight stays in
its packed 4-bit form, each 16-entry table is looked up with vector permutes and the products are
accumulated in fp32, in parallel over blocks of output rows (``torch.get_num_threads()`` threads).
The kernel reads the scales from its own copy blocked by 4 rows (:func:`blocked_scales`, made once
per layer), so that a GEMV whose weights come from DRAM streams them instead of striding.
For many activation rows (``M ≥ DEQUANT_MIN_ROWS``, a prompt rather than a decode step) the kernel
instead dequantizes tiles of at most ``TILE_WEIGHTS`` weights into a scratch buffer and multiplies
them with ``torch.mm``: the dequantization is then a small part of the work and PyTorch's GEMM the
fastest way to do the rest; memory still holds only the packed weight and one tile.

:class:`CpuLinear` validates one layer's operands once and keeps the call itself to a few
microseconds (a decode step calls every layer once); :func:`any4_gemm_cpu` is the one-off form.
Layout and the dequantization rule: :mod:`paperworks_kernels.any4_gemm.packing`. Callers check
:func:`available` first (the library needs a C++ compiler on first use) and fall back to
:func:`~paperworks_kernels.any4_gemm.reference.dequantize` otherwise.
"""

from __future__ import annotations

import ctypes

import torch

from paperworks_kernels.any4_gemm.reference import check_operands
from paperworks_kernels.cpu import library

DEQUANT_MIN_ROWS = 64
TILE_WEIGHTS = 1 << 20


def available() -> bool:
    """True when the compiled kernel library can be used (builds it on the first call)."""
    return library() is not None


class _Layer(ctypes.Structure):
    """Mirror of ``struct PwAny4Layer`` in any4_gemm.cpp."""

    _fields_ = [(name, ctypes.c_int64) for name in ("N", "K", "g", "row_lut")] + [
        (name, ctypes.c_void_p) for name in ("packed", "lut", "sz", "bias", "szb")
    ]


def _f32(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.float32 and t.is_contiguous() else t.float().contiguous()


def blocked_scales(scales_and_zeros: torch.Tensor) -> torch.Tensor:
    """The kernel's copy of the scales: (K/g, N, 2) → (⌈N/4⌉, K/g, 2, 4) fp32, contiguous.

    Per block of 4 rows and per group, the 4 scales then the 4 zeros (rows past N are zero), so
    that the SIMD GEMV reads a block's scales as one sequential stream (``PwAny4Layer.szb``).
    """
    groups, n, _ = scales_and_zeros.shape
    n4 = -(-n // 4) * 4
    padded = scales_and_zeros.new_zeros((groups, n4, 2), dtype=torch.float32)
    padded[:, :n] = scales_and_zeros
    return padded.view(groups, n4 // 4, 4, 2).permute(1, 0, 3, 2).contiguous()


class CpuLinear:
    """One layer's packed operands, checked once, for repeated ``x @ Ŵᵀ (+ bias)`` on the CPU.

    Holds references to (or fp32 contiguous copies of) the operands, and where the SIMD kernel
    runs (``g`` a multiple of 32 on an AVX2 or AVX-512 build), its own copy of the scales blocked by
    4 rows (:func:`blocked_scales`; ``scale_copy_bytes`` says how large: 8 bytes per row and group,
    the size of ``scales_and_zeros``; no copy of the codes, no fp32 weight). The caller rebuilds it
    when the operands change. ``arch`` picks a build of the library (tests check the AVX2 and
    portable code on an AVX-512 machine with ``"haswell"`` and ``"x86-64"``).
    """

    def __init__(
        self,
        packed: torch.Tensor,
        lut: torch.Tensor,
        scales_and_zeros: torch.Tensor,
        group_size: int,
        bias: torch.Tensor | None = None,
        *,
        arch: str = "native",
    ) -> None:
        self.n, self.k = check_operands(packed, lut, scales_and_zeros, group_size)
        if any(t.device.type != "cpu" for t in (packed, lut, scales_and_zeros)):
            raise ValueError("the CPU any4 kernel needs CPU tensors")
        if bias is not None and bias.shape != (self.n,):
            raise ValueError(f"bias must be ({self.n},), got {tuple(bias.shape)}")
        lib = library(arch)
        if lib is None:
            raise RuntimeError("the fused CPU kernels are not available (see paperworks_kernels.cpu.status())")
        self.lib, self.group_size = lib, group_size
        self.packed, self.lut, self.sz = packed.contiguous(), _f32(lut), _f32(scales_and_zeros)
        self.bias = _f32(bias) if bias is not None else None
        self.szb = blocked_scales(self.sz) if lib.pw_any4_uses_blocked_scales(group_size) else None
        self.scale_copy_bytes = 0 if self.szb is None else self.szb.numel() * self.szb.element_size()
        self._layer = _Layer(
            self.n,
            self.k,
            group_size,
            int(self.lut.dim() == 2),
            self.packed.data_ptr(),
            self.lut.data_ptr(),
            self.sz.data_ptr(),
            self.bias.data_ptr() if self.bias is not None else None,
            self.szb.data_ptr() if self.szb is not None else None,
        )
        self._ptr = ctypes.addressof(self._layer)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``x (..., K)`` → ``(..., N)`` in ``x.dtype`` (computed in fp32)."""
        k, n = self.k, self.n
        if x.dim() == 2 and x.dtype == torch.float32 and x.is_cpu:  # the common call (a decode step: fp32 rows)
            m, kx = x.shape
            sxm, skx = x.stride()
            if kx == k and skx == 1 and (sxm >= k or m == 1) and m < DEQUANT_MIN_ROWS:
                return self._gemv(x, (m, n))
        if x.shape[-1] != k:
            raise ValueError(f"x has K={x.shape[-1]} but the weight has K={k}")
        if not x.is_cpu:
            raise ValueError("the CPU any4 kernel needs CPU tensors")
        lead = x.shape[:-1]
        x2 = x if x.dim() == 2 else x.reshape(-1, k)
        # the kernel reads row m at x + m·stride(0) with unit steps along k: rows that overlap (an expanded
        # x, stride 0) or are not unit-strided are copied first
        if x2.dtype != torch.float32 or x2.stride(-1) != 1 or (x2.shape[0] > 1 and x2.stride(0) < k):
            x2 = x2.float().contiguous()
        if x2.shape[0] >= DEQUANT_MIN_ROWS and n and k:
            y = self._by_tiles(x2, torch.get_num_threads()).view(*lead, n)
        else:
            y = self._gemv(x2, (*lead, n))
        return y if x.dtype == torch.float32 else y.to(x.dtype)

    def _gemv(self, x2: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
        """The kernel on fp32 rows ``x2`` (M × K, unit k stride, rows ≥ K apart or M = 1) into a new ``shape``."""
        y = torch.empty(shape, dtype=torch.float32)
        rc = self.lib.pw_any4_gemm(
            self._ptr, x2.data_ptr(), x2.shape[0], max(self.k, x2.stride(0)), y.data_ptr(), torch.get_num_threads()
        )
        if rc:
            raise ValueError(f"the any4 CPU kernel rejected its operands (code {rc})")
        return y

    def _by_tiles(self, x2: torch.Tensor, threads: int) -> torch.Tensor:
        n, k = self.n, self.k
        rows = max(1, TILE_WEIGHTS // k)
        y = torch.empty(x2.shape[0], n, dtype=torch.float32)
        tile = torch.empty(min(rows, n), k, dtype=torch.float32)
        for n0 in range(0, n, rows):
            n1 = min(n, n0 + rows)
            w = tile[: n1 - n0]
            rc = self.lib.pw_any4_dequant(self._ptr, n0, n1, w.data_ptr(), threads)
            if rc:
                raise ValueError(f"the any4 CPU dequantization rejected its operands (code {rc})")
            part = x2 @ w.t()
            if self.bias is not None:
                part += self.bias[n0:n1]
            y[:, n0:n1] = part
        return y


def any4_gemm_cpu(
    x: torch.Tensor,
    packed: torch.Tensor,
    lut: torch.Tensor,
    scales_and_zeros: torch.Tensor,
    group_size: int,
    *,
    bias: torch.Tensor | None = None,
    arch: str = "native",
) -> torch.Tensor:
    """``x @ Ŵᵀ (+ bias)`` for CPU tensors with the fused kernel; same arguments and result as the reference.

    Args:
        x: activations (..., K), any float dtype (computed in fp32, returned in ``x.dtype``).
        packed: (N, K/2) uint8 codes; lut: (N, 16) or (16,); scales_and_zeros: (K/g, N, 2).
        group_size: g (even, dividing K).
        bias: optional (N,).
        arch: which build of the library (see :class:`CpuLinear`).
    Raises:
        RuntimeError: the kernel library is not available (check :func:`available` first).
        ValueError: operands of the wrong shape or on a non-CPU device.
    """
    return CpuLinear(packed, lut, scales_and_zeros, group_size, bias, arch=arch)(x)
