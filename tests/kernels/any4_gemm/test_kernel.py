"""The Triton any4 GEMM against its PyTorch reference (spec §7, kernel checks).

Without CUDA the kernel runs in the Triton interpreter (see conftest.py), so the
shapes stay tiny: M ∈ {1, 3, 16}, N ∈ {64, 96}, K ∈ {128, 256}, g ∈ {32, 64}.
"""

import pytest
import torch

from paperworks_kernels.any4_gemm import any4_gemm_reference, dequantize, make_scales_and_zeros, pack_nibbles


def _operands(n: int, k: int, gs: int, row_lut: bool, seed: int):
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (n, k), generator=g)
    lut = torch.randn(n, 16, generator=g) if row_lut else torch.randn(16, generator=g)
    s = torch.rand(n, k // gs, generator=g) * 0.2 + 0.01
    z = torch.randn(n, k // gs, generator=g) * 0.1
    return pack_nibbles(codes), lut, make_scales_and_zeros(s, z)


def _assert_matches(y: torch.Tensor, x: torch.Tensor, packed, lut, sz, gs: int) -> None:
    """fp32 bound of the spec: |y − ref| ≤ 1e-4·‖x_m‖·‖ŵ_n‖ element-wise."""
    ref = any4_gemm_reference(x, packed, lut, sz, gs)
    w = dequantize(packed, lut, sz, gs)
    bound = 1e-4 * x.norm(dim=1)[:, None] * w.norm(dim=1)[None, :]
    assert y.shape == ref.shape and y.dtype == x.dtype
    assert torch.isfinite(y).all()
    assert ((y - ref).abs() <= bound).all(), f"max err {(y - ref).abs().max():.3g}"


CASES = [  # (M, N, K, g): every M with both group sizes, N and K varied
    (1, 64, 128, 32),
    (1, 96, 256, 64),
    (3, 96, 128, 64),
    (3, 64, 256, 32),
    (16, 64, 256, 64),
    (16, 96, 128, 32),
]


@pytest.mark.parametrize("m,n,k,gs", CASES)
@pytest.mark.parametrize("row_lut", [True, False], ids=["row_lut", "global_lut"])
def test_matches_reference_fp32(gemm, m, n, k, gs, row_lut):
    packed, lut, sz = _operands(n, k, gs, row_lut, seed=m * 1000 + n + k + gs)
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(m))
    _assert_matches(gemm(x, packed, lut, sz, gs), x, packed, lut, sz, gs)


@pytest.mark.parametrize("m,row_lut", [(1, True), (3, False), (16, True)])
def test_lut_in_registers_variant(gemm, m, row_lut):
    packed, lut, sz = _operands(96, 128, 32, row_lut, seed=7)
    x = torch.randn(m, 128, generator=torch.Generator().manual_seed(3))
    _assert_matches(gemm(x, packed, lut, sz, 32, lut_in_registers=True), x, packed, lut, sz, 32)


@pytest.mark.parametrize("row_lut", [True, False])
def test_identity_returns_dequantized_weight(gemm, row_lut):
    """X = I (M = K) gives Ŵᵀ, as in tinygemm's identity test."""
    packed, lut, sz = _operands(64, 128, 32, row_lut, seed=11)
    eye = torch.eye(128)
    y = gemm(eye, packed, lut, sz, 32)
    torch.testing.assert_close(y, dequantize(packed, lut, sz, 32).t(), rtol=1e-6, atol=1e-6)


def test_every_output_written(gemm):
    """A NaN-poisoned output buffer comes back fully overwritten (partial N tile, odd M)."""
    packed, lut, sz = _operands(96, 128, 64, True, seed=5)
    for m in (1, 3):
        x = torch.randn(m, 128)
        out = torch.full((m, 96), float("nan"))
        y = gemm(x, packed, lut, sz, 64, out=out, block_n=64)
        assert not torch.isnan(y).any()
        _assert_matches(y, x, packed, lut, sz, 64)


def test_fp16_activations(gemm):
    packed, lut, sz = _operands(64, 128, 32, True, seed=2)
    x = torch.randn(16, 128).half()
    y = gemm(x, packed, lut.half(), sz.half(), 32)
    ref = any4_gemm_reference(x.float(), packed, lut.half().float(), sz.half().float(), 32)
    assert y.dtype == torch.float16
    torch.testing.assert_close(y.float(), ref, rtol=2e-3, atol=2e-2)


def test_bf16_decode_row(gemm):
    """bf16 for one activation row (the CUDA-core GEMV path); the MMA path in bf16 is GPU-only below."""
    packed, lut, sz = _operands(96, 256, 64, True, seed=4)
    x = torch.randn(1, 256).bfloat16()
    y = gemm(x, packed, lut.bfloat16(), sz.bfloat16(), 64)
    ref = any4_gemm_reference(x.float(), packed, lut.bfloat16().float(), sz.bfloat16().float(), 64)
    torch.testing.assert_close(y.float(), ref, rtol=2e-2, atol=5e-2)


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="bf16 tl.dot is wrong in the Triton 3.9 interpreter; needs a GPU"
)
def test_bf16_mma_on_gpu(gemm):
    packed, lut, sz = _operands(96, 256, 64, True, seed=9)
    x = torch.randn(16, 256).bfloat16()
    y = gemm(x, packed, lut.bfloat16(), sz.bfloat16(), 64).float()
    ref = any4_gemm_reference(x.float(), packed, lut.bfloat16().float(), sz.bfloat16().float(), 64)
    bad = ~torch.isclose(y, ref, rtol=1.6e-2, atol=1e-1)
    assert int(bad.sum()) <= 3  # the repo's tinygemm tests tolerate a few bf16 outliers


def test_wrapper_validates(gemm):
    """Bad shapes and dtypes are refused by the host wrapper (conftest's KernelError is a RuntimeError)."""
    packed, lut, sz = _operands(64, 128, 32, True, seed=1)
    with pytest.raises(RuntimeError, match="K=64"):
        gemm(torch.randn(2, 64), packed, lut, sz, 32)
    with pytest.raises(RuntimeError, match="fp32/fp16/bf16"):
        gemm(torch.randint(0, 3, (2, 128)), packed, lut, sz, 32)
    with pytest.raises(RuntimeError, match="multiple of group_size"):
        gemm(torch.randn(2, 128), packed, lut, sz[:3], 48)


def test_leading_dims_and_empty(gemm):
    packed, lut, sz = _operands(64, 128, 32, False, seed=6)
    x = torch.randn(2, 3, 128)
    y = gemm(x, packed, lut, sz, 32)
    assert y.shape == (2, 3, 64)
    _assert_matches(y.reshape(6, 64), x.reshape(6, 128), packed, lut, sz, 32)
