"""The fused C++ CPU selective scan (forward and backward) against the sequential reference.

Random shapes: odd channel counts (a partial SIMD block), L = 1, state sizes the kernel compiles
for (4, 8, 16) and others (3, 5, 32), Mamba-1 and Mamba-2, with and without D / z / Δ bias /
softplus, strided (transposed) operands, and a gradient on the returned last state. Gradients
are compared with the reference's autograd gradients; float64 gradcheck checks them against
finite differences.
"""

import sys
from pathlib import Path

import pytest
import torch

from paperworks_kernels.cpu import library, status
from paperworks_kernels.selective_scan import selective_scan, selective_scan_fused, selective_scan_reference

sys.path.insert(0, str(Path(__file__).parent))
from _operands import ORDER, args, operands  # noqa: E402

CASES = [  # (B, D, L, N, heads): heads=None is Mamba-1, else the Mamba-2 scalar-A variant
    (1, 4, 1, 4, None),
    (2, 16, 7, 16, None),
    (1, 37, 130, 8, None),
    (2, 3, 65, 5, None),
    (1, 20, 70, 32, None),
    (2, 16, 64, 16, 4),
    (1, 4, 7, 4, 1),
    (2, 18, 100, 3, 3),
]


def _grads(fn, ops, softplus, gy, gh, **kw):
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in ops.items() if v is not None}
    y, h = fn(*[leaves.get(k) for k in ORDER], delta_softplus=softplus, return_last_state=True, **kw)
    loss = (y * gy).sum() + (h.to(gh.dtype) * gh).sum()
    grads = torch.autograd.grad(loss, list(leaves.values()))
    return y.detach(), h.detach(), dict(zip(leaves, grads))


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-12))


def _check(ops, softplus=True, tol=1e-5, arch="native"):
    g = torch.Generator().manual_seed(7)
    b, d, L = ops["u"].shape
    n = ops["B"].shape[1]
    gy, gh = torch.randn(b, d, L, generator=g), torch.randn(b, d, n, generator=g)
    y_ref, h_ref, g_ref = _grads(selective_scan_reference, ops, softplus, gy, gh)
    y, h, g_fused = _grads(selective_scan_fused, ops, softplus, gy, gh, arch=arch)
    assert y.shape == y_ref.shape and y.dtype == y_ref.dtype
    assert _rel(y, y_ref) <= tol and _rel(h, h_ref) <= tol, (_rel(y, y_ref), _rel(h, h_ref))
    for name, ref in g_ref.items():
        assert g_fused[name].shape == ref.shape, name
        assert _rel(g_fused[name], ref) <= 10 * tol, f"d{name}: {_rel(g_fused[name], ref):.3g}"


@pytest.mark.parametrize("b,d,L,n,heads", CASES)
def test_forward_and_gradients_match_reference(cpu_kernels, b, d, L, n, heads):
    _check(operands(b, d, L, n, heads=heads, seed=b + d + L + n))


@pytest.mark.parametrize("arch", ["haswell", "x86-64"])
@pytest.mark.parametrize("b,d,L,n,heads", [(2, 16, 7, 16, None), (1, 37, 130, 8, None), (2, 18, 100, 3, 3)])
def test_other_builds(cpu_kernels, arch, b, d, L, n, heads):
    """The 8-lane code (AVX2, or plain SSE2 vectors) on this machine, whatever its widest vector."""
    if library(arch) is None:
        pytest.skip(f"no {arch} build here: {status(arch).detail}")
    ops = operands(b, d, L, n, heads=heads, seed=b + d + L + n)
    _check(dict(ops, u=ops["u"].transpose(1, 2).contiguous().transpose(1, 2)), arch=arch)
    inputs = tuple(t.double().requires_grad_(True) for t in args(operands(1, 9, 4, 2, heads=heads and 3, seed=1)))
    fn = lambda *xs: selective_scan_fused(*xs, delta_softplus=True, return_last_state=True, arch=arch)  # noqa: E731
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)


def test_optional_operands_absent_and_no_softplus(cpu_kernels):
    ops = operands(2, 19, 33, 4, seed=1, full=False)
    _check(dict(ops, delta=ops["delta"].abs()), softplus=False)
    ops = operands(1, 8, 20, 4, heads=2, seed=2)
    ops["D"] = torch.randn(2)  # Mamba-2 skip per head
    _check(ops)


def test_strided_operands(cpu_kernels):
    """Transposed views, as the models pass them (channels or states contiguous, time strided)."""
    ops = operands(2, 24, 45, 8, seed=3)
    for key in ("u", "delta", "z", "B", "C"):
        ops[key] = ops[key].transpose(1, 2).contiguous().transpose(1, 2)
    assert ops["u"].stride(1) == 1
    _check(ops)


def test_error_at_the_benchmark_shape(cpu_kernels):
    """b = 1, d = 32, N = 8, L = 1024: within 1e-5 of the sequential reference, relative to max |y|
    (|y| reaches ~50 here, where one fp32 ulp is 4e-6; the fp32 reference itself is that far from fp64)."""
    ops = operands(1, 32, 1024, 8, seed=4)
    y = selective_scan_fused(*args(ops), delta_softplus=True)
    assert _rel(y, selective_scan_reference(*args(ops), delta_softplus=True)) <= 1e-6


@pytest.mark.parametrize("heads", [None, 3])
def test_gradcheck_float64(cpu_kernels, heads):
    ops = operands(2, 6, 5, 3, heads=heads, seed=5)
    inputs = tuple(t.double().requires_grad_(True) for t in args(ops))
    fn = lambda *xs: selective_scan_fused(*xs, delta_softplus=True, return_last_state=True)  # noqa: E731
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)


def test_threads_give_identical_results(cpu_kernels):
    ops = {k: v.requires_grad_(True) if v is not None else None for k, v in operands(3, 40, 50, 8, seed=6).items()}
    runs = []
    previous = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            y = selective_scan_fused(*args(ops), delta_softplus=True)
            runs.append((y, torch.autograd.grad(y.square().sum(), [ops["u"], ops["B"], ops["A"]])))
    finally:
        torch.set_num_threads(previous)
    assert torch.equal(runs[0][0], runs[1][0])
    assert all(torch.equal(a, b) for a, b in zip(runs[0][1], runs[1][1]))


def test_dtypes_and_empty_inputs(cpu_kernels):
    ops = operands(1, 8, 12, 4, seed=8)
    bf = {k: v.bfloat16() if k in ("u", "z") else v for k, v in ops.items()}
    y = selective_scan_fused(*args(bf), delta_softplus=True)
    assert y.dtype == torch.bfloat16
    ref = selective_scan_reference(*args(bf), delta_softplus=True)
    assert _rel(y.float(), ref.float()) <= 1e-2  # both round fp32 results to bfloat16
    empty = operands(2, 8, 0, 4, seed=9)
    y, h = selective_scan_fused(*args(empty), delta_softplus=True, return_last_state=True)
    assert y.shape == (2, 8, 0) and torch.equal(h, torch.zeros(2, 8, 4))


def test_auto_dispatch_picks_the_fused_kernel_and_ignores_chunk_options(cpu_kernels, monkeypatch):
    ops = operands(1, 8, 30, 4, seed=10)
    calls = []
    import paperworks_kernels.selective_scan as ss

    real = ss.selective_scan_fused
    monkeypatch.setattr(ss, "selective_scan_fused", lambda *a, **k: calls.append(k) or real(*a, **k))
    y = selective_scan(*args(ops), delta_softplus=True, chunk=5, impl="auto")
    assert calls and "chunk" not in calls[0]
    assert _rel(y, selective_scan_reference(*args(ops), delta_softplus=True)) <= 1e-5


def test_unsupported_state_size_goes_to_the_chunked_scan(cpu_kernels):
    ops = operands(1, 2, 3, 300, seed=11)  # N = 300 > 256
    y = selective_scan(*args(ops), delta_softplus=True, impl="auto")
    assert _rel(y, selective_scan_reference(*args(ops), delta_softplus=True)) <= 1e-4
    with pytest.raises(RuntimeError, match="N <= 256"):
        selective_scan_fused(*args(ops), delta_softplus=True)
