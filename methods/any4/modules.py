"""``QuantLinear``: a drop-in ``nn.Linear`` holding packed 4-bit codes, a LUT and group scales.

Every format (int-b, nf4, fp4, any-b) is stored the same way, in the operand
layout of :mod:`paperworks_kernels.any4_gemm.packing`, and computes ``y = x Ŵᵀ + b`` with

- CUDA input: the Triton LUT-GEMM (:func:`paperworks_kernels.any4_gemm.kernel.any4_gemm`),
  imported lazily so the CPU path never imports Triton;
- CPU input: ``cpu_mode = "auto"`` (default) runs the fused C++ kernel on the packed
  weight (:mod:`paperworks_kernels.any4_gemm.cpu`: LUT lookups in registers, fp32
  accumulation, only the 4-bit form in memory) when it is available — it needs a C++
  compiler the first time — and ``"cached"`` otherwise; ``"fused"`` insists on the kernel;
  ``"cached"`` dequantizes once into a cached fp32 weight and calls ``F.linear`` (dense
  speed, one fp32 copy per layer; also what ``fused`` does for an input that needs a
  gradient, the kernel having no backward); ``"dequant"`` dequantizes on every call.
  ``bench/any4.py`` measures them against a dense ``nn.Linear`` and PyTorch's int4
  kernel (docs/bench/any4.md).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from methods.any4.quantized import LUT_SIZE, QuantizedWeight, bits_per_weight
from paperworks_kernels.any4_gemm import cpu as any4_cpu
from paperworks_kernels.any4_gemm import dequantize

CpuMode = Literal["auto", "fused", "cached", "dequant"]


class QuantLinear(nn.Module):
    """Linear layer with a quantized weight (N = out_features, K = in_features).

    Buffers: ``packed`` (N, K/2) uint8, ``lut`` (N, 16) or (16,), ``scales_and_zeros``
    (K/g, N, 2), optional ``bias`` (N,).
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        *,
        group_size: int,
        bits: int = 4,
        fmt: str = "any4",
        row_lut: bool = True,
        bias: bool = False,
        cpu_mode: CpuMode = "auto",
    ) -> None:
        super().__init__()
        if in_features % group_size or in_features % 2:
            raise ValueError(f"in_features={in_features} must be even and a multiple of group_size={group_size}")
        self.in_features, self.out_features = in_features, out_features
        self.group_size, self.bits, self.fmt = group_size, bits, fmt
        self.cpu_mode: CpuMode = cpu_mode
        self.register_buffer("packed", torch.zeros(out_features, in_features // 2, dtype=torch.uint8))
        self.register_buffer("lut", torch.zeros((out_features, LUT_SIZE) if row_lut else (LUT_SIZE,)))
        self.register_buffer("scales_and_zeros", torch.zeros(in_features // group_size, out_features, 2))
        self.register_buffer("bias", torch.zeros(out_features) if bias else None)
        self._cache: tuple[tuple, torch.Tensor] | None = None
        self._kernel: tuple[tuple, any4_cpu.CpuLinear] | None = None

    @classmethod
    def from_quantized(
        cls, qw: QuantizedWeight, bias: torch.Tensor | None = None, cpu_mode: CpuMode = "auto"
    ) -> QuantLinear:
        n, k = qw.shape
        layer = cls(
            k,
            n,
            group_size=qw.group_size,
            bits=qw.bits,
            fmt=qw.fmt,
            row_lut=qw.row_lut,
            bias=bias is not None,
            cpu_mode=cpu_mode,
        )
        packed, lut, sz = qw.packed()
        layer.packed.copy_(packed)
        layer.lut.copy_(lut)
        layer.scales_and_zeros.copy_(sz)
        if bias is not None:
            layer.bias.copy_(bias.detach())
        return layer

    @property
    def row_lut(self) -> bool:
        return self.lut.dim() == 2

    def dequantized_weight(self) -> torch.Tensor:
        """Ŵ (N, K) in fp32."""
        return dequantize(self.packed, self.lut, self.scales_and_zeros, self.group_size)

    def bits_per_weight(self) -> float:
        return bits_per_weight(
            bits=self.bits, group_size=self.group_size, in_features=self.in_features, row_lut=self.row_lut
        )

    def _buffers_key(self) -> tuple:
        """Changes whenever a buffer is modified in place or replaced (``load_state_dict``, ``.to``).

        Read on every CPU call (a decode step calls each layer once), so the buffers come from ``_buffers``
        directly: ``nn.Module.__getattr__`` made this 2.9 µs a call, 6 % of a 1536² GEMV."""
        b = self._buffers
        p, lut, sz, bias = b["packed"], b["lut"], b["scales_and_zeros"], b["bias"]
        key = (p._version, lut._version, sz._version, p.data_ptr(), lut.data_ptr(), sz.data_ptr())
        return key if bias is None else (*key, bias._version, bias.data_ptr())

    def __getstate__(self) -> dict:
        """Copies and pickles leave out the kernel handle (ctypes pointers); it is rebuilt on the next call."""
        state = dict(super().__getstate__())
        state["_kernel"] = None
        return state

    def _cpu_kernel(self) -> any4_cpu.CpuLinear:
        """The fused kernel's view of this layer's buffers (rebuilt when they change)."""
        key = self._buffers_key()
        if self._kernel is None or self._kernel[0] != key:
            self._kernel = (
                key,
                any4_cpu.CpuLinear(self.packed, self.lut, self.scales_and_zeros, self.group_size, self.bias),
            )
        return self._kernel[1]

    def cpu_path(self) -> str:
        """The CPU path ``forward`` takes: ``fused``, ``cached`` or ``dequant``."""
        if self.cpu_mode == "auto":
            return "fused" if any4_cpu.available() else "cached"
        return self.cpu_mode

    def _cached_weight(self, dtype: torch.dtype) -> torch.Tensor:
        key = (*self._buffers_key(), dtype)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self.dequantized_weight().to(dtype))
        return self._cache[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cpu:
            path = self.cpu_path()
            if path == "fused" and not (x.requires_grad and torch.is_grad_enabled()):  # the kernel has no autograd
                return self._cpu_kernel()(x)
            w = self._cached_weight(x.dtype) if path in ("cached", "fused") else self.dequantized_weight().to(x.dtype)
            return F.linear(x, w, None if self.bias is None else self.bias.to(x.dtype))
        if x.is_cuda:
            from paperworks_kernels.any4_gemm.kernel import any4_gemm

            y = any4_gemm(x, self.packed, self.lut.to(x.dtype), self.scales_and_zeros.to(x.dtype), self.group_size)
            return y if self.bias is None else y + self.bias.to(y.dtype)
        # another device (no kernel of ours there; the tests' lazy stand-in): dequantize
        return F.linear(x, self.dequantized_weight().to(x.dtype), None if self.bias is None else self.bias.to(x.dtype))

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, fmt={self.fmt}, "
            f"group_size={self.group_size}, row_lut={self.row_lut}, cpu_mode={self.cpu_mode}"
        )
