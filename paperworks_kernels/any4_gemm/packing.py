"""Packing format of the any4 GEMM operands (spec §6.2).

The weight of a linear layer ``W`` (N outputs × K inputs, PyTorch layout) is
stored as four operands:

``packed``  uint8, shape (N, K/2)
    Two 4-bit codes per byte along K. Byte ``packed[n, j]`` holds the code of
    column ``2j`` in its **low** nibble and the code of column ``2j + 1`` in its
    **high** nibble: ``packed[n, j] = code[n, 2j] | (code[n, 2j+1] << 4)``.
``lut``  float, shape (N, 16) for a per-row table or (16,) for one global table
    The values a code stands for, in the normalized space and already centred:
    an any4 row stores ``c − 8`` for its 16 learned centroids ``c ∈ [0, 15]``.
    Formats with fewer than 16 levels (any3, any2) pad the table; unused entries
    are never indexed.
``scales_and_zeros``  float, shape (K/g, N, 2)
    Per (group, row): ``[..., 0]`` the scale ``s`` and ``[..., 1]`` the offset
    ``zero = m + 8·s`` (``m`` the group minimum) for min/max formats, or
    ``zero = 0`` for absmax formats (nf4, fp4).

Dequantization is then one rule for every format (spec §3.1, §6.2)::

    ŵ[n, k] = lut[n, code[n, k]] · s[k // g, n] + zero[k // g, n]

This module is plain torch so the CPU path and the tests never need Triton.
"""

from __future__ import annotations

import torch

NIBBLE_ORDER = "low nibble = even k, high nibble = odd k"


def pack_nibbles(codes: torch.Tensor) -> torch.Tensor:
    """Pack (N, K) integer codes in [0, 15] into (N, K/2) uint8, low nibble = even k."""
    if codes.dim() != 2:
        raise ValueError(f"codes must be 2-D (N, K), got shape {tuple(codes.shape)}")
    if codes.shape[1] % 2:
        raise ValueError(f"K must be even to pack two codes per byte, got K={codes.shape[1]}")
    c = codes.to(torch.int16)
    if c.numel() and (int(c.min()) < 0 or int(c.max()) > 15):
        raise ValueError("codes must lie in [0, 15]")
    lo, hi = c[:, 0::2], c[:, 1::2]
    return (lo | (hi << 4)).to(torch.uint8).contiguous()


def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`pack_nibbles`: (N, K/2) uint8 → (N, K) uint8 codes."""
    if packed.dtype != torch.uint8 or packed.dim() != 2:
        raise ValueError("packed must be a 2-D uint8 tensor")
    lo = packed & 0x0F
    hi = packed >> 4
    return torch.stack((lo, hi), dim=-1).reshape(packed.shape[0], packed.shape[1] * 2)


def make_scales_and_zeros(scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    """Stack per-(row, group) scales and zeros, each (N, K/g), into the (K/g, N, 2) layout."""
    if scales.shape != zeros.shape or scales.dim() != 2:
        raise ValueError("scales and zeros must both be (N, K/g)")
    return torch.stack((scales, zeros), dim=-1).transpose(0, 1).contiguous()
