"""Scan orders of a 2-D spectrum (spec fourier_mamba §3.2): zigzag low → high frequency, and the ablation's raster.

The grid is the fftshift layout: row index i ↔ signed frequency k_u = i − ⌊H/2⌋ ∈ [−⌊H/2⌋, ⌈H/2⌉−1],
column j ↔ k_v = j − ⌊W/2⌋ likewise. For the half spectrum of ``rfft2`` (``half=True``) the
columns are k_v = j ∈ [0, W−1] (only the rows are shifted).

Zigzag ([R], ours — no public code exists; keep this module the one place to swap it):

1. band b = |k_u| + |k_v| (the L1 radius; JPEG's zigzag moved from a corner to the centre);
2. tokens sorted by band, ascending; DC (0, 0) first;
3. within a band, by angle θ = atan2(k_u, k_v): counter-clockwise from θ = 0 on the full
   plane (θ ∈ [0, 2π)), from θ = −π/2 to π/2 on the half plane; odd bands walk it backwards,
   so consecutive bands meet at neighbouring cells (the "zig-zag").

``chebyshev`` uses the square rings b = max(|k_u|, |k_v|) with the same walk; ``raster`` is
row-major over the shifted grid (the ablation). Orders are cached per (kind, H, W, half).
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np
import torch

ScanKind = Literal["zigzag", "chebyshev", "raster"]
SCAN_KINDS: tuple[str, ...] = ("zigzag", "chebyshev", "raster")


def frequency_grid(h: int, w: int, half: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Signed frequencies (k_u, k_v) of every cell, each (h, w), in the shifted layout."""
    ku = np.arange(h) - h // 2
    kv = np.arange(w) if half else np.arange(w) - w // 2
    return np.meshgrid(ku, kv, indexing="ij")


def band_index(h: int, w: int, half: bool = False, kind: ScanKind = "zigzag") -> np.ndarray:
    """Band of every cell (h, w): L1 radius for zigzag, L∞ for chebyshev."""
    ku, kv = frequency_grid(h, w, half)
    return np.maximum(np.abs(ku), np.abs(kv)) if kind == "chebyshev" else np.abs(ku) + np.abs(kv)


@functools.lru_cache(maxsize=128)
def _order(kind: str, h: int, w: int, half: bool) -> tuple[np.ndarray, np.ndarray]:
    if h < 1 or w < 1:
        raise ValueError(f"grid must be at least 1×1, got {h}×{w}")
    if kind == "raster":
        perm = np.arange(h * w)
    elif kind in ("zigzag", "chebyshev"):
        ku, kv = frequency_grid(h, w, half)
        band = band_index(h, w, half, kind).ravel()  # type: ignore[arg-type]
        theta = np.arctan2(ku, kv).ravel()
        if not half:
            theta = np.mod(theta, 2 * math.pi)  # [0, 2π), counter-clockwise from θ = 0
        # odd bands walk their ring backwards; np.lexsort sorts by the last key first
        walk = np.where(band % 2 == 1, -theta, theta)
        perm = np.lexsort((walk, band))
    else:
        raise ValueError(f"unknown scan order {kind!r}; one of {', '.join(SCAN_KINDS)}")
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    perm.setflags(write=False)
    inverse.setflags(write=False)
    return perm, inverse


def scan_order(kind: ScanKind, h: int, w: int, half: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(perm, inverse) over the h·w flattened cells: ``seq = flat[..., perm]``, ``flat = seq[..., inverse]``."""
    perm, inverse = _order(kind, h, w, half)
    return torch.from_numpy(perm.copy()), torch.from_numpy(inverse.copy())
