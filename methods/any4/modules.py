"""``QuantLinear``: a drop-in ``nn.Linear`` holding packed 4-bit codes, a LUT and group scales.

Every format (int-b, nf4, fp4, any-b) is stored the same way, in the operand
layout of :mod:`paperworks_kernels.any4_gemm.packing`, and computes ``y = x Ŵᵀ + b`` with

- CUDA input: the Triton LUT-GEMM (:func:`paperworks_kernels.any4_gemm.kernel.any4_gemm`),
  imported lazily so the CPU path never imports Triton;
- CPU input: ``cpu_mode = "cached"`` (default) dequantizes once into a cached fp32
  weight and calls ``F.linear``; ``"dequant"`` dequantizes on every call and keeps
  only the packed form in memory. ``bench/any4.py`` measures both against a dense
  ``nn.Linear`` (docs/bench/any4.md): on this CPU the cached path is the fastest
  correct one, at the memory cost of one fp32 copy per layer.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from methods.any4.quantized import LUT_SIZE, QuantizedWeight, bits_per_weight
from paperworks_kernels.any4_gemm import dequantize

CpuMode = Literal["cached", "dequant"]


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
        cpu_mode: CpuMode = "cached",
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

    @classmethod
    def from_quantized(
        cls, qw: QuantizedWeight, bias: torch.Tensor | None = None, cpu_mode: CpuMode = "cached"
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

    def _cached_weight(self, dtype: torch.dtype) -> torch.Tensor:
        key = (
            self.packed._version,
            self.lut._version,
            self.scales_and_zeros._version,
            self.packed.data_ptr(),
            self.lut.data_ptr(),
            self.scales_and_zeros.data_ptr(),
            dtype,
        )
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self.dequantized_weight().to(dtype))
        return self._cache[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda:
            from paperworks_kernels.any4_gemm.kernel import any4_gemm

            y = any4_gemm(x, self.packed, self.lut.to(x.dtype), self.scales_and_zeros.to(x.dtype), self.group_size)
            return y if self.bias is None else y + self.bias.to(y.dtype)
        if self.cpu_mode == "cached":
            w = self._cached_weight(x.dtype)
        else:
            w = self.dequantized_weight().to(x.dtype)
        return F.linear(x, w, None if self.bias is None else self.bias.to(x.dtype))

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, fmt={self.fmt}, "
            f"group_size={self.group_size}, row_lut={self.row_lut}, cpu_mode={self.cpu_mode}"
        )
