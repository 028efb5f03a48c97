"""The fixed value grids of the baselines (spec §3.5) and nearest-grid rounding.

NF4 and FP4 follow bitsandbytes' ``quantize_nf4``/``quantize_fp4``: absmax scaling
per block of g consecutive elements, then the nearest grid point, decided by the
midpoints ("pivots") between neighbouring grid values; a value exactly on a pivot
goes to the lower value (NF4) or the lower magnitude (FP4), as bnb's ``x > pivot``
tests do.
"""

from __future__ import annotations

import torch

#: NF4 normalized grid, code q ↦ NF4_GRID[q] (16 values in [-1, 1]).
NF4_GRID = (
    -1.0,
    -0.6961928010,
    -0.5250730515,
    -0.3949174881,
    -0.2844413817,
    -0.1847734302,
    -0.0910500363,
    0.0,
    0.0795802996,
    0.1609302014,
    0.2461123019,
    0.3379152417,
    0.4407098293,
    0.5626170039,
    0.7229568362,
    1.0,
)

#: FP4 (E2M1 with bnb's bias, divided by its max of 12) magnitudes; code q < 8 is +mag[q], q ≥ 8 is −mag[q−8].
FP4_MAGNITUDES = (0.0, 1.0 / 192.0, 1.0 / 6.0, 0.25, 1.0 / 3.0, 0.5, 2.0 / 3.0, 1.0)
FP4_GRID = FP4_MAGNITUDES + tuple(-m for m in FP4_MAGNITUDES)


def nearest_sorted(values: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """Index into the ascending ``grid`` of the nearest point to each value; ties go to the lower one."""
    pivots = (grid[1:] + grid[:-1]) / 2
    return torch.searchsorted(pivots.contiguous(), values.contiguous(), right=False)


def nf4_codes(x: torch.Tensor) -> torch.Tensor:
    """NF4 codes of absmax-normalized values ``x ∈ [-1, 1]``."""
    grid = torch.tensor(NF4_GRID, dtype=x.dtype, device=x.device)
    return nearest_sorted(x, grid)


def fp4_codes(x: torch.Tensor) -> torch.Tensor:
    """FP4 codes of absmax-normalized values: nearest magnitude plus the sign bit (bit 3)."""
    mags = torch.tensor(FP4_MAGNITUDES, dtype=x.dtype, device=x.device)
    code = nearest_sorted(x.abs(), mags)
    return torch.where(x < 0, code + 8, code)
