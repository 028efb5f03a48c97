"""Packing format and PyTorch reference of the any4 GEMM (no Triton needed)."""

import pytest
import torch

from paperworks_kernels.any4_gemm import (
    any4_gemm_reference,
    dequantize,
    make_scales_and_zeros,
    pack_nibbles,
    unpack_nibbles,
)


def test_pack_unpack_round_trip():
    g = torch.Generator().manual_seed(0)
    codes = torch.randint(0, 16, (37, 130), generator=g, dtype=torch.uint8)
    packed = pack_nibbles(codes)
    assert packed.shape == (37, 65) and packed.dtype == torch.uint8
    assert torch.equal(unpack_nibbles(packed), codes)


def test_nibble_order_low_is_even_k():
    codes = torch.tensor([[1, 2, 15, 0]], dtype=torch.uint8)
    assert pack_nibbles(codes).tolist() == [[0x21, 0x0F]]


def test_pack_rejects_bad_codes():
    with pytest.raises(ValueError):
        pack_nibbles(torch.tensor([[16, 0]]))
    with pytest.raises(ValueError):
        pack_nibbles(torch.zeros(2, 3, dtype=torch.uint8))


def test_scales_and_zeros_layout():
    s = torch.arange(6.0).view(3, 2)  # (N=3, G=2)
    z = -s
    sz = make_scales_and_zeros(s, z)
    assert sz.shape == (2, 3, 2)
    assert sz[1, 2, 0] == s[2, 1] and sz[1, 2, 1] == z[2, 1]


def test_dequantize_rule_row_and_global_lut():
    """ŵ[n, k] = lut[n, code] · s[k//g, n] + zero[k//g, n], checked element by element."""
    g = torch.Generator().manual_seed(1)
    n, k, gs = 5, 16, 4
    codes = torch.randint(0, 16, (n, k), generator=g)
    s, z = torch.rand(n, k // gs, generator=g), torch.randn(n, k // gs, generator=g)
    for lut in (torch.randn(n, 16, generator=g), torch.randn(16, generator=g)):
        w = dequantize(pack_nibbles(codes), lut, make_scales_and_zeros(s, z), gs)
        for i in range(n):
            for j in range(k):
                val = lut[i, codes[i, j]] if lut.dim() == 2 else lut[codes[i, j]]
                assert w[i, j] == pytest.approx(float(val * s[i, j // gs] + z[i, j // gs]), abs=1e-6)
        x = torch.randn(3, k, generator=g)
        torch.testing.assert_close(
            any4_gemm_reference(x, pack_nibbles(codes), lut, make_scales_and_zeros(s, z), gs), x @ w.t()
        )


def test_reference_validates_shapes():
    packed = torch.zeros(4, 8, dtype=torch.uint8)
    with pytest.raises(ValueError, match="multiple of group_size"):
        dequantize(packed, torch.zeros(16), torch.zeros(1, 4, 2), 6)
    with pytest.raises(ValueError, match="lut"):
        dequantize(packed, torch.zeros(4, 8), torch.zeros(2, 4, 2), 8)
    with pytest.raises(ValueError, match="scales_and_zeros"):
        dequantize(packed, torch.zeros(16), torch.zeros(4, 2, 2), 8)
