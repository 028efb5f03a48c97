"""Synthetic rain (spec §5) and the data splits."""

import numpy as np
import pytest

from methods.fourier_mamba.data import (
    RainSet,
    add_rain,
    clean_backgrounds,
    line_kernel,
    make_rain_set,
    rain100l_pairs,
    sample_crops,
)
from methods.fourier_mamba.metrics import psnr_y


def test_line_kernel_is_normalised_and_oriented():
    k = line_kernel(21, 0.0)
    assert k.sum() == pytest.approx(1.0)
    ys, xs = np.nonzero(k > 1e-3)
    assert np.ptp(ys) >= 19 and np.ptp(xs) <= 1  # vertical line
    ys, xs = np.nonzero(line_kernel(21, 30.0) > 1e-3)
    assert 5 <= np.ptp(xs) <= 12  # tilted by ~30°: horizontal extent ≈ 20·sin 30°


def test_rain_is_seeded_adds_brightness_and_heavy_is_heavier():
    clean = np.full((80, 96, 3), 0.3, np.float32)
    a = add_rain(clean, np.random.default_rng(5))
    b = add_rain(clean, np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert (a >= clean - 1e-6).all() and a.max() <= 1.0 and (a > clean + 0.05).mean() > 0.01
    heavy = add_rain(clean, np.random.default_rng(5), "H")
    assert psnr_y(heavy, clean) < psnr_y(a, clean)
    with pytest.raises(ValueError):
        add_rain(clean, np.random.default_rng(0), "X")  # type: ignore[arg-type]


def test_crops_come_from_disjoint_regions():
    img = np.tile(np.linspace(0, 1, 100, dtype=np.float32)[None, :, None], (40, 1, 3))  # value = column / 99
    rs = RainSet(["ramp"], [img], [img])
    rng = np.random.default_rng(0)
    tr, _ = sample_crops(rs, 20, 16, "train", rng, flips=False)
    ho, _ = sample_crops(rs, 20, 16, "heldout", rng, flips=False)
    assert tr.max() < 75 / 99 and ho.min() >= 75 / 99 - 1e-6


def test_rain_set_and_rain100l_sample(data_dir):
    pairs = rain100l_pairs(data_dir)
    assert [p[0] for p in pairs] == ["1", "2", "3"] and pairs[0][1].shape == pairs[0][2].shape
    assert all(15 < psnr_y(r, c) < 35 for _, r, c in pairs)  # real light rain
    bgs = clean_backgrounds(data_dir)
    assert {"china", "flower", "rain100l_1"} <= set(bgs)
    rs = make_rain_set({"china": bgs["china"][:64, :96]}, variants=2, seed=0)
    assert rs.names == ["china#0", "china#1"] and not np.array_equal(rs.rainy[0], rs.rainy[1])
