"""PyTorch reference of the any4 GEMM: dequantize, then matmul (the spec of the kernel).

``Y (M×N) = X (M×K) · Ŵᵀ`` with ``ŵ[n, k] = lut[n, code[n, k]] · s + zero`` per
(row, group), see :mod:`paperworks_kernels.any4_gemm.packing` for the operand layout.
"""

from __future__ import annotations

import torch

from paperworks_kernels.any4_gemm.packing import unpack_nibbles


def check_operands(
    packed: torch.Tensor, lut: torch.Tensor, scales_and_zeros: torch.Tensor, group_size: int
) -> tuple[int, int]:
    """Validate the packed operands; return (N, K)."""
    if packed.dtype != torch.uint8 or packed.dim() != 2:
        raise ValueError("packed must be a (N, K/2) uint8 tensor")
    n, k = packed.shape[0], packed.shape[1] * 2
    if group_size <= 0 or k % group_size:
        raise ValueError(f"K={k} must be a multiple of group_size={group_size}")
    if lut.shape not in ((n, 16), (16,)):
        raise ValueError(f"lut must be (N, 16) or (16,), got {tuple(lut.shape)} for N={n}")
    if scales_and_zeros.shape != (k // group_size, n, 2):
        raise ValueError(
            f"scales_and_zeros must be (K/g, N, 2) = {(k // group_size, n, 2)}, got {tuple(scales_and_zeros.shape)}"
        )
    return n, k


def dequantize(
    packed: torch.Tensor,
    lut: torch.Tensor,
    scales_and_zeros: torch.Tensor,
    group_size: int,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Ŵ (N, K) from the packed operands, computed in fp32 and returned in ``dtype``."""
    n, k = check_operands(packed, lut, scales_and_zeros, group_size)
    codes = unpack_nibbles(packed).long()
    table = lut.float()
    vals = table.gather(1, codes) if table.dim() == 2 else table[codes]
    sz = scales_and_zeros.float().transpose(0, 1)  # (N, K/g, 2)
    w = vals.view(n, k // group_size, group_size) * sz[..., 0:1] + sz[..., 1:2]
    return w.reshape(n, k).to(dtype)


def any4_gemm_reference(
    x: torch.Tensor, packed: torch.Tensor, lut: torch.Tensor, scales_and_zeros: torch.Tensor, group_size: int
) -> torch.Tensor:
    """``x @ dequantize(...)ᵀ`` in fp32, returned in ``x.dtype`` (any leading dims of x)."""
    w = dequantize(packed, lut, scales_and_zeros, group_size)
    return (x.float() @ w.t()).to(x.dtype)
