"""Zigzag order checks of spec fourier_mamba §7.1, on full (fft2) and half (rfft2) spectra."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from methods.fourier_mamba.scan_order import band_index, frequency_grid, scan_order

SIZES = [(8, 8), (7, 9), (32, 32), (5, 4), (1, 6), (16, 9)]


def _cells(h, w, half, kind="zigzag"):
    perm, inverse = scan_order(kind, h, w, half)
    ku, kv = frequency_grid(h, w, half)
    return perm.numpy(), inverse.numpy(), ku.ravel()[perm], kv.ravel()[perm]


@pytest.mark.parametrize("h,w", SIZES)
@pytest.mark.parametrize("half", [False, True])
@pytest.mark.parametrize("kind", ["zigzag", "chebyshev", "raster"])
def test_permutation_and_inverse(h, w, half, kind):
    perm, inverse = scan_order(kind, h, w, half)
    assert torch.equal(perm.sort().values, torch.arange(h * w))
    x = torch.randn(3, h * w)
    assert torch.equal(x[:, perm][:, inverse], x)


@pytest.mark.parametrize("h,w", SIZES)
@pytest.mark.parametrize("half", [False, True])
def test_bands_non_decreasing_from_dc(h, w, half):
    _, _, ku, kv = _cells(h, w, half)
    band = np.abs(ku) + np.abs(kv)
    assert ku[0] == 0 and kv[0] == 0  # DC first, (0, 0) after the shift
    assert (np.diff(band) >= 0).all()


@pytest.mark.parametrize("h,w,half", [(32, 32, False), (33, 31, False), (32, 17, True)])
def test_radius_grows_per_band_and_with_position(h, w, half):
    _, _, ku, kv = _cells(h, w, half)
    band = np.abs(ku) + np.abs(kv)
    rho = np.hypot(ku, kv)
    per_band = [rho[band == b] for b in np.unique(band)]
    assert all(a.mean() < b.mean() for a, b in zip(per_band, per_band[1:], strict=False))
    assert all(a.min() <= b.min() and a.max() <= b.max() for a, b in zip(per_band, per_band[1:], strict=False))
    assert spearmanr(np.arange(rho.size), rho).statistic > 0.95


@pytest.mark.parametrize("h,w", [(16, 16), (15, 17), (9, 8)])
@pytest.mark.parametrize("half", [False, True])
def test_consecutive_tokens_in_a_band_are_8_neighbours(h, w, half):
    """Rings not clipped by the grid are walked as one 8-connected path (the zig-zag property)."""
    _, _, ku, kv = _cells(h, w, half)
    band = np.abs(ku) + np.abs(kv)
    lim_u = (h - 1) // 2  # both signs of k_u exist up to (h−1)//2
    lim_v = w - 1 if half else (w - 1) // 2
    unclipped = min(lim_u, lim_v)
    steps = 0
    for i in range(1, len(band)):
        if band[i] == band[i - 1] and band[i] <= unclipped:
            assert max(abs(ku[i] - ku[i - 1]), abs(kv[i] - kv[i - 1])) == 1, (i, band[i])
            steps += 1
        if band[i] == band[i - 1] + 1 and band[i] <= unclipped:  # the zig-zag turn: bands meet at neighbours
            assert max(abs(ku[i] - ku[i - 1]), abs(kv[i] - kv[i - 1])) == 1, ("turn", i)
    assert steps > 0


def test_odd_bands_reverse_direction():
    _, _, ku, kv = _cells(9, 9, False)
    band = np.abs(ku) + np.abs(kv)
    theta = np.mod(np.arctan2(ku, kv), 2 * np.pi)
    for b, sign in ((2, 1), (3, -1), (4, 1)):
        t = theta[band == b]
        assert (np.sign(np.diff(t)) == sign).all()
    assert (ku[band == 2][0], kv[band == 2][0]) == (0, 2)  # even bands start at angle 0


def test_chebyshev_and_raster_variants():
    _, _, ku, kv = _cells(9, 9, False, "chebyshev")
    assert (np.diff(np.maximum(np.abs(ku), np.abs(kv))) >= 0).all()
    perm, _ = scan_order("raster", 4, 5)
    assert torch.equal(perm, torch.arange(20))
    assert band_index(3, 3)[1, 1] == 0
    with pytest.raises(ValueError, match="unknown scan order"):
        scan_order("spiral", 4, 4)  # type: ignore[arg-type]
