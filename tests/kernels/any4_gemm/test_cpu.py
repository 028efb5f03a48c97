"""The fused C++ CPU any4 GEMV/GEMM against the dequantize-then-matmul reference.

Random operands at odd sizes (N and M not multiples of the 4-row and 4-activation blocks, group
sizes not multiples of 32 or 64, which take other code paths, K not a multiple of the 128 weights
some steps span, rows prefetched ahead past the end), a per-row LUT and a global one,
a bias, M = 0 and N = 0, the tiled dequantize-then-mm path for many rows, and the AVX2 and
portable builds of the library beside the native one (built for ``-march=haswell`` and
``-march=x86-64`` on an x86 machine; skipped elsewhere).
"""

import pytest
import torch

from paperworks_kernels.any4_gemm import any4_gemm_reference, make_scales_and_zeros, pack_nibbles
from paperworks_kernels.any4_gemm import cpu as any4_cpu
from paperworks_kernels.cpu import library, status

SHAPES = [  # (M, N, K, g, row LUT)
    (1, 64, 128, 64, True),
    (1, 37, 192, 64, False),
    (1, 13, 96, 32, True),
    (3, 37, 96, 32, False),
    (5, 13, 128, 64, True),
    (16, 70, 256, 128, True),
    (1, 10, 12, 6, True),
    (7, 9, 20, 10, False),
    (2, 5, 576, 64, True),
    (1, 23, 576, 64, True),  # the rows prefetched ahead lie past N for every block
    (1, 41, 288, 96, True),  # g a multiple of 32, not of 64
    (1, 130, 384, 192, False),  # K and g not multiples of 128
    (3, 19, 576, 64, True),
    (1, 37, 512, 128, False),  # 128-weight steps, one group per step
    (1, 33, 768, 256, True),  # two steps per group
]


def _operands(m, n, k, g, row, seed=0):
    gen = torch.Generator().manual_seed(seed)
    packed = pack_nibbles(torch.randint(0, 16, (n, k), generator=gen))
    lut = torch.randn(n, 16, generator=gen) if row else torch.randn(16, generator=gen)
    sz = make_scales_and_zeros(torch.rand(n, k // g, generator=gen) + 0.1, torch.randn(n, k // g, generator=gen))
    return torch.randn(m, k, generator=gen), packed, lut, sz


def _rel(a, b):
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-12)) if b.numel() else 0.0


@pytest.fixture(scope="module", params=["native", "haswell", "x86-64"])
def arch(request, cpu_kernels):
    if request.param != "native" and library(request.param) is None:
        pytest.skip(f"no {request.param} build here: {status(request.param).detail}")
    return request.param


@pytest.mark.parametrize("m,n,k,g,row", SHAPES)
def test_matches_reference(arch, m, n, k, g, row):
    x, packed, lut, sz = _operands(m, n, k, g, row, seed=m + n + k)
    y = any4_cpu.any4_gemm_cpu(x, packed, lut, sz, g, arch=arch)
    assert y.shape == (m, n) and y.dtype == torch.float32
    assert _rel(y, any4_gemm_reference(x, packed, lut, sz, g)) <= 1e-5


def test_bias_leading_dims_and_dtypes(arch):
    x, packed, lut, sz = _operands(6, 21, 128, 64, True, seed=1)
    bias = torch.randn(21)
    ref = any4_gemm_reference(x, packed, lut, sz, 64) + bias
    layer = any4_cpu.CpuLinear(packed, lut, sz, 64, bias, arch=arch)
    assert _rel(layer(x.view(2, 3, 128)), ref.view(2, 3, 21)) <= 1e-5
    assert _rel(layer(x[:1]), ref[:1]) <= 1e-5  # the M = 1 path adds the bias too
    y16 = layer(x.bfloat16())
    assert y16.dtype == torch.bfloat16
    assert _rel(y16.float(), any4_gemm_reference(x.bfloat16().float(), packed, lut, sz, 64) + bias) <= 1e-2
    strided = torch.randn(6, 256)[:, ::2]  # a non-unit k stride is copied, not misread
    assert _rel(layer(strided), any4_gemm_reference(strided.contiguous(), packed, lut, sz, 64) + bias) <= 1e-5
    rows = torch.randn(6, 256)[:, 64:192]  # rows further apart than K are read in place
    assert _rel(layer(rows), any4_gemm_reference(rows.contiguous(), packed, lut, sz, 64) + bias) <= 1e-5
    same = x[:1].expand(4, 128)  # one row seen 4 times (stride 0): copied, not read past its end
    assert _rel(layer(same), (ref[:1]).expand(4, 21)) <= 1e-5


def test_many_rows_use_dequantized_tiles(arch, monkeypatch):
    monkeypatch.setattr(any4_cpu, "TILE_WEIGHTS", 10 * 128)  # several tiles, the last one partial
    x, packed, lut, sz = _operands(any4_cpu.DEQUANT_MIN_ROWS + 3, 33, 128, 64, True, seed=2)
    bias = torch.randn(33)
    y = any4_cpu.CpuLinear(packed, lut, sz, 64, bias, arch=arch)(x)
    assert _rel(y, any4_gemm_reference(x, packed, lut, sz, 64) + bias) <= 1e-5


def test_blocked_scales_layout():
    g = torch.Generator().manual_seed(4)
    sz = torch.randn(3, 10, 2, generator=g)
    b = any4_cpu.blocked_scales(sz)
    assert b.shape == (3, 3, 2, 4) and b.is_contiguous()
    for n in range(12):
        for q in range(3):
            want = sz[q, n] if n < 10 else torch.zeros(2)
            assert torch.equal(b[n // 4, q, :, n % 4], want)


def test_the_simd_kernel_keeps_its_own_blocked_scales(cpu_kernels):
    x, packed, lut, sz = _operands(1, 9, 128, 64, True, seed=5)
    layer = any4_cpu.CpuLinear(packed, lut, sz, 64)
    if status().isa == "portable loops":
        assert layer.szb is None and layer.scale_copy_bytes == 0
        return
    assert layer.scale_copy_bytes == 3 * 2 * 2 * 4 * 4  # ⌈9/4⌉ blocks × 2 groups × (s, zero) × 4 rows × fp32
    layer.szb.zero_()  # the kernel reads this copy, not scales_and_zeros
    assert torch.equal(layer(x), torch.zeros(1, 9))


def test_empty_operands(arch):
    x, packed, lut, sz = _operands(0, 8, 64, 32, True)
    assert any4_cpu.any4_gemm_cpu(x, packed, lut, sz, 32, arch=arch).shape == (0, 8)
    x, packed, lut, sz = _operands(3, 0, 64, 32, False)
    assert any4_cpu.any4_gemm_cpu(x, packed, lut, sz, 32, arch=arch).shape == (3, 0)


def test_threads_give_identical_results(cpu_kernels):
    x, packed, lut, sz = _operands(1, 300, 256, 64, True, seed=3)
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = any4_cpu.any4_gemm_cpu(x, packed, lut, sz, 64)
        torch.set_num_threads(2)
        two = any4_cpu.any4_gemm_cpu(x, packed, lut, sz, 64)
    finally:
        torch.set_num_threads(previous)
    assert torch.equal(one, two)


def test_operand_errors(cpu_kernels):
    x, packed, lut, sz = _operands(1, 8, 64, 32, True)
    with pytest.raises(ValueError, match="multiple of group_size"):
        any4_cpu.any4_gemm_cpu(x, packed, lut, sz[:1], 48)  # K = 64 is not a multiple of 48
    with pytest.raises(ValueError, match="K=63"):
        any4_cpu.any4_gemm_cpu(torch.randn(1, 63), packed, lut, sz, 32)
    with pytest.raises(ValueError, match="bias"):
        any4_cpu.CpuLinear(packed, lut, sz, 32, torch.randn(7))
