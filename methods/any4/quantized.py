"""The typed output of every quantizer, and the bit accounting of §3.4.

All formats share one representation, the one the LUT kernel consumes::

    ŵ[n, k] = lut[n or ·, code[n, k]] · s[n, k // g] + zero[n, k // g]

- any-b: per-row table ``c − 8`` (c the learned centroids in [0, 2^b − 1]), ``zero = m + 8s``;
- int-b: the global table ``0 − 8 … 2^b − 1 − 8``, ``zero = m + 8s`` (so ŵ = q·s + m);
- nf4/fp4: the global bnb grid, ``s`` = block absmax, ``zero = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from paperworks_kernels.any4_gemm import make_scales_and_zeros, pack_nibbles

LUT_SIZE = 16


def bits_per_weight(
    *, bits: int, group_size: int, in_features: int, row_lut: bool, lut_bits: int = 16, meta_bits_per_group: int = 32
) -> float:
    """Storage per weight: ``b + 32/g + 16·2^b/K`` for a row LUT (§3.4).

    The 32 bits per group are a bf16 scale plus a bf16 offset (int, any) or bnb's
    fp32 absmax (nf4, fp4); a row LUT adds ``2^b`` bf16 entries per row of K weights.
    """
    bpw = bits + meta_bits_per_group / group_size
    if row_lut:
        bpw += lut_bits * (2**bits) / in_features
    return bpw


@dataclass
class QuantizedWeight:
    """One quantized weight matrix (N outputs × K inputs).

    Attributes:
        fmt: format name (``any4``, ``nf4`` …); bits: code width b.
        group_size: g along K.
        codes: (N, K) uint8 in [0, 2^b).
        lut: (N, 16) per-row or (16,) global table, float32 (entries ≥ 2^b unused).
        scales, zeros: (N, K/g) float32.
    """

    fmt: str
    bits: int
    group_size: int
    codes: torch.Tensor
    lut: torch.Tensor
    scales: torch.Tensor
    zeros: torch.Tensor

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.codes.shape)  # type: ignore[return-value]

    @property
    def row_lut(self) -> bool:
        return self.lut.dim() == 2

    def dequantize(self) -> torch.Tensor:
        """Ŵ (N, K) in float32."""
        n, k = self.shape
        idx = self.codes.long()
        vals = self.lut.gather(1, idx) if self.row_lut else self.lut[idx]
        g = self.group_size
        return (vals.view(n, k // g, g) * self.scales[..., None] + self.zeros[..., None]).reshape(n, k)

    def packed(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Kernel operands ``(packed (N, K/2) uint8, lut, scales_and_zeros (K/g, N, 2))``."""
        return pack_nibbles(self.codes), self.lut.contiguous(), make_scales_and_zeros(self.scales, self.zeros)

    def bits_per_weight(self) -> float:
        return bits_per_weight(
            bits=self.bits, group_size=self.group_size, in_features=self.shape[1], row_lut=self.row_lut
        )


def pad_lut(values: torch.Tensor) -> torch.Tensor:
    """Pad the last dim of a table to 16 entries with zeros (unused codes)."""
    n = values.shape[-1]
    if n > LUT_SIZE:
        raise ValueError(f"a table holds at most {LUT_SIZE} entries, got {n}")
    if n == LUT_SIZE:
        return values.contiguous()
    pad = torch.zeros(*values.shape[:-1], LUT_SIZE - n, dtype=values.dtype, device=values.device)
    return torch.cat([values, pad], dim=-1)
