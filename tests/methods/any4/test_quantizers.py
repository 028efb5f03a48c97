"""Round trips and exactness of every quantizer (spec §7, unit invariants)."""

import pytest
import torch

from methods.any4.config import QuantConfig, parse_format
from methods.any4.grids import FP4_GRID, NF4_GRID
from methods.any4.quantized import bits_per_weight
from methods.any4.quantizers import AbsmaxGridQuantizer, AnyQuantizer, IntQuantizer, create_quantizer, group_normalize
from paperworks_kernels.any4_gemm import dequantize


def _w(n=32, k=256, seed=0, dist="gauss"):
    g = torch.Generator().manual_seed(seed)
    if dist == "laplace":
        u = torch.rand(n, k, generator=g) - 0.5
        return -torch.sign(u) * torch.log1p(-2 * u.abs()) * 0.02
    return torch.randn(n, k, generator=g) * 0.02


@pytest.mark.parametrize("bits", [2, 3, 4])
def test_group_normalization_range(bits):
    w = _w()
    u, s, m = group_normalize(w, 64, bits)
    top = 2**bits - 1
    assert u.min() >= 0 and u.max() <= top
    ug = u.view(32, 4, 64)
    assert torch.all(ug.amin(dim=2) == 0)
    torch.testing.assert_close(ug.amax(dim=2), torch.full((32, 4), float(top)), rtol=0, atol=1e-5)
    torch.testing.assert_close(u.view(32, 4, 64) * s[..., None] + m[..., None], w.view(32, 4, 64), rtol=0, atol=1e-7)


def test_constant_group_is_safe():
    w = torch.full((2, 64), 0.3)
    qw = IntQuantizer(4).quantize(w, 32)
    torch.testing.assert_close(qw.dequantize(), w)


def test_int4_error_at_most_half_step_and_grid_exact():
    w = _w(seed=1)
    qw = IntQuantizer(4).quantize(w, 64)
    _, s, _ = group_normalize(w, 64, 4)
    err = (qw.dequantize() - w).abs().view(32, 4, 64)
    assert (err <= s[..., None] / 2 * (1 + 1e-5) + 1e-8).all()
    q = torch.randint(0, 16, (8, 128), generator=torch.Generator().manual_seed(2)).float()
    q[:, ::64] = 0.0
    q[:, 1::64] = 15.0  # every group reaches both ends of the grid
    scale = torch.rand(8, 2).repeat_interleave(64, 1) * 0.01 + 1e-3
    on_grid = q * scale - 0.05
    torch.testing.assert_close(IntQuantizer(4).quantize(on_grid, 64).dequantize(), on_grid, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fmt,grid", [("nf4", NF4_GRID), ("fp4", FP4_GRID)])
def test_absmax_grid_points_map_to_themselves(fmt, grid):
    g = torch.Generator().manual_seed(3)
    table = torch.tensor(grid)
    codes = torch.randint(0, 16, (16, 128), generator=g)
    codes[:, ::64] = 15 if fmt == "nf4" else 7  # value +1 in every block: absmax is exact
    absmax = torch.rand(16, 2, generator=g).repeat_interleave(64, 1) + 0.1
    w = table[codes] * absmax
    torch.testing.assert_close(AbsmaxGridQuantizer(fmt).quantize(w, 64).dequantize(), w, rtol=0, atol=0)


@pytest.mark.parametrize("fmt,grid", [("nf4", NF4_GRID), ("fp4", FP4_GRID)])
def test_absmax_grid_is_nearest_point(fmt, grid):
    w = _w(16, 128, seed=4)
    qw = AbsmaxGridQuantizer(fmt).quantize(w, 32)
    absmax = w.view(16, 4, 32).abs().amax(dim=2).repeat_interleave(32, 1)
    x = w / absmax
    brute = (x[..., None] - torch.tensor(grid)).abs().amin(dim=-1)
    ours = (x - torch.tensor(grid)[qw.codes.long()]).abs()
    torch.testing.assert_close(ours, brute, rtol=0, atol=1e-7)


def test_any4_reproduces_rows_with_16_values_exactly():
    g = torch.Generator().manual_seed(5)
    n, k = 12, 256
    values = torch.randn(n, 16, generator=g)
    idx = torch.randint(0, 16, (n, k), generator=g)
    idx[:, :16] = torch.arange(16)
    w = values.gather(1, idx)
    qw = AnyQuantizer(4).quantize(w, k)  # g = K: one group per row
    torch.testing.assert_close(qw.dequantize(), w, rtol=0, atol=2e-6)


@pytest.mark.parametrize("dist", ["gauss", "laplace"])
def test_any4_int_init_never_worse_than_int4(dist):
    """Plain k-means from the 0..15 grid: normalized error ≤ int4's row by row; weight MSE on average."""
    w = _w(64, 256, seed=6, dist=dist)
    u, _, _ = group_normalize(w, 64, 4)
    int_err = ((u - u.round()) ** 2).sum(dim=1)
    qa = AnyQuantizer(4, init="int").quantize(w, 64)
    cents = qa.lut + 8
    any_err = ((u - cents.gather(1, qa.codes.long())) ** 2).sum(dim=1)
    assert (any_err <= int_err * (1 + 1e-5) + 1e-9).all()
    mse_any = ((qa.dequantize() - w) ** 2).mean()
    mse_int = ((IntQuantizer(4).quantize(w, 64).dequantize() - w) ** 2).mean()
    assert mse_any <= mse_int


def test_calibration_weights_change_the_lut_and_follow_omega():
    w = _w(8, 128, seed=7)
    xbar = torch.zeros(128)
    xbar[:64] = -3.0  # signed mean: the absolute value is what counts
    q = AnyQuantizer(4)
    _, s, _ = group_normalize(w, 64, 4)
    omega = q.sample_weights(xbar, s, 64, (8, 128))
    torch.testing.assert_close(omega[:, :64], 3.0 * s[:, :1].expand(8, 64))
    assert torch.all(omega[:, 64:] == 0)
    cal = q.quantize(w, 64, sample_weight=xbar)
    plain = q.quantize(w, 64)
    err = lambda qw, sl: ((qw.dequantize() - w)[:, sl] ** 2).mean()  # noqa: E731
    assert err(cal, slice(0, 64)) < err(plain, slice(0, 64))  # all centroids serve the weighted half


def test_lower_bit_widths_use_fewer_levels():
    w = _w(16, 128, seed=8)
    errs = {}
    for b in (2, 3, 4):
        qw = AnyQuantizer(b).quantize(w, 64)
        assert int(qw.codes.max()) < 2**b
        errs[b] = float(((qw.dequantize() - w) ** 2).mean())
    assert errs[4] < errs[3] < errs[2]


def test_packed_operands_dequantize_like_the_quantizer():
    for fmt in ("int4", "nf4", "fp4", "any4", "any2"):
        qw = create_quantizer(QuantConfig(fmt=fmt)).quantize(_w(8, 128, seed=9), 64)
        packed, lut, sz = qw.packed()
        torch.testing.assert_close(dequantize(packed, lut, sz, 64), qw.dequantize(), rtol=0, atol=1e-7)


def test_bits_per_weight():
    assert bits_per_weight(bits=4, group_size=128, in_features=4096, row_lut=True) == 4.3125
    assert bits_per_weight(bits=4, group_size=128, in_features=4096, row_lut=False) == 4.25
    # SmolLM2: the 16-entry bf16 table alone adds 0.444 (K = 576) or 0.167 (K = 1536) bits
    assert bits_per_weight(bits=4, group_size=64, in_features=576, row_lut=True) - 4.5 == pytest.approx(
        0.4444, abs=1e-4
    )
    assert bits_per_weight(bits=4, group_size=64, in_features=1536, row_lut=True) - 4.5 == pytest.approx(
        0.1667, abs=1e-4
    )


def test_format_parsing_and_config_validation():
    assert parse_format("any3") == ("any", 3) and parse_format("nf4") == ("nf4", 4)
    with pytest.raises(ValueError):
        parse_format("any5")
    with pytest.raises(ValueError):
        QuantConfig(fmt="any3", init="nf4")
    with pytest.raises(ValueError):
        QuantConfig(group_size=3)
    with pytest.raises(ValueError, match="multiple of group_size"):
        IntQuantizer(4).quantize(torch.zeros(2, 100), 64)
