"""The Triton selective scan against the sequential reference (spec fourier_mamba §7.3).

Without CUDA the kernel runs in the Triton interpreter (see conftest.py), so each spec
value of B ≤ 2, L ∈ {1, 7, 64, 257}, D ∈ {4, 16}, N ∈ {4, 16} appears in a handful of
cases rather than the full product. Every output buffer starts NaN-poisoned.
"""

import sys
from pathlib import Path

import pytest
import torch

from paperworks_kernels.selective_scan import selective_scan_reference

sys.path.insert(0, str(Path(__file__).parent))
from _operands import args, operands  # noqa: E402

CASES = [  # (B, D, L, N, heads): heads=None is Mamba-1, else the Mamba-2 scalar-A variant
    (1, 4, 1, 4, None),
    (2, 16, 7, 16, None),
    (1, 16, 64, 4, None),
    (2, 4, 64, 16, None),
    (1, 4, 257, 16, None),
    (2, 16, 257, 4, None),
    (2, 16, 64, 16, 4),
    (1, 4, 7, 4, 1),
]


def _check(triton_scan, ops, softplus: bool, out_dtype=torch.float32, tol: float = 1e-4):
    ref, h_ref = selective_scan_reference(*args(ops), delta_softplus=softplus, return_last_state=True)
    out = torch.full(ops["u"].shape, float("nan"), dtype=out_dtype)
    y, h = triton_scan(*args(ops), softplus, out=out)
    assert not torch.isnan(y).any() and not torch.isnan(h).any()
    err, err_h = float((y.float() - ref.float()).abs().max()), float((h - h_ref).abs().max())
    assert err <= tol and err_h <= 1e-4, f"max err y {err:.3g}, h {err_h:.3g}"


@pytest.mark.parametrize("b,d,L,n,heads", CASES)
def test_matches_reference(triton_scan, b, d, L, n, heads):
    _check(triton_scan, operands(b, d, L, n, heads=heads, seed=b + d + L + n), softplus=True)


def test_without_optional_operands_and_per_head_skip(triton_scan):
    ops = operands(2, 16, 33, 4, seed=1, full=False)
    _check(triton_scan, dict(ops, delta=ops["delta"].abs()), softplus=False)  # Δ used as given
    ops = operands(1, 8, 20, 4, heads=2, seed=2)
    ops["D"] = torch.randn(2)  # Mamba-2 skip per head
    _check(triton_scan, ops, softplus=True)


def test_partial_channel_block(triton_scan):
    """d = 24 with BLOCK_D = 16: the second program's block is half masked."""
    ops = operands(1, 24, 9, 4, seed=3)
    ref = selective_scan_reference(*args(ops), delta_softplus=True)
    y, _ = triton_scan(*args(ops), True, out=torch.full((1, 24, 9), float("nan")), block_d=16)
    assert (y - ref).abs().max() <= 1e-4


def test_delta_to_zero_strong_decay_causality(triton_scan):
    ops = operands(1, 8, 24, 4, seed=4, full=False)
    ops["D"] = torch.randn(8)
    tiny = dict(ops, delta=torch.full_like(ops["delta"], -40.0))
    y, _ = triton_scan(*args(tiny), True)
    torch.testing.assert_close(y, ops["u"] * ops["D"][:, None], rtol=0, atol=1e-6)

    strong = dict(ops, A=torch.full_like(ops["A"], -1e4), D=None, delta=ops["delta"].abs() + 0.01)
    y, _ = triton_scan(*args(strong), False)
    torch.testing.assert_close(y, strong["delta"] * ops["u"] * (ops["B"] * ops["C"]).sum(1, keepdim=True))

    y0, _ = triton_scan(*args(ops), True)
    pert = dict(ops, u=ops["u"].clone())
    pert["u"][..., 13] += 5.0
    y1, _ = triton_scan(*args(pert), True)
    assert torch.equal(y1[..., :13], y0[..., :13]) and not torch.allclose(y1[..., 13:], y0[..., 13:])


def test_half_precision_output(triton_scan):
    ops = operands(1, 8, 16, 4, seed=8)
    ops = {k: (v.half() if k in ("u", "z") and v is not None else v) for k, v in ops.items()}
    _check(triton_scan, ops, softplus=True, out_dtype=torch.float16, tol=2e-2)


def test_rejects_bad_shapes(triton_scan):
    ops = operands(1, 4, 5, 4)
    with pytest.raises(RuntimeError, match="ValueError: delta must be"):  # KernelError from the fixture
        triton_scan(*args(dict(ops, delta=ops["delta"][:, :2])), True)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="autograd through the compiled kernel needs CUDA")
def test_autograd_on_cuda():
    from paperworks_kernels.selective_scan.kernel import selective_scan_triton

    ops = {k: (v.cuda().requires_grad_(True) if v is not None else None) for k, v in operands(2, 16, 50, 8).items()}
    ref = {k: v.detach().clone().requires_grad_(True) for k, v in ops.items()}
    selective_scan_triton(*args(ops), delta_softplus=True).square().sum().backward()
    selective_scan_reference(*args(ref), delta_softplus=True).square().sum().backward()
    for k in ops:
        torch.testing.assert_close(ops[k].grad, ref[k].grad, rtol=1e-3, atol=1e-3)
