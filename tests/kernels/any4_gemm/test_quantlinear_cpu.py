"""``QuantLinear`` on the CPU takes the fused kernel by default (``cpu_mode="auto"``) and agrees with
its dequantize-once path; an input that needs a gradient goes through the differentiable path."""

import copy

import pytest
import torch

from methods.any4.modules import QuantLinear
from methods.any4.quantizers import AnyQuantizer


@pytest.fixture
def layers(cpu_kernels):
    g = torch.Generator().manual_seed(0)
    w, bias = torch.randn(48, 128, generator=g) * 0.05, torch.randn(48, generator=g)
    qw = AnyQuantizer(4).quantize(w, 64)
    return QuantLinear.from_quantized(qw, bias), QuantLinear.from_quantized(qw, bias, cpu_mode="cached")


def test_auto_uses_the_fused_kernel_and_matches_cached(layers):
    fused, cached = layers
    assert fused.cpu_path() == "fused" and cached.cpu_path() == "cached"
    x = torch.randn(2, 5, 128)
    with torch.no_grad():
        y, ref = fused(x), cached(x)
    assert fused._kernel is not None and cached._kernel is None  # the fused path ran, the cached one did not
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
    assert fused._cache is None  # no fp32 copy of the weight was kept


def test_in_place_buffer_changes_reach_the_kernel(layers):
    fused, cached = layers
    x = torch.randn(1, 128)
    with torch.no_grad():
        before = fused(x)
        for layer in layers:
            layer.lut.mul_(2.0)
        after, ref = fused(x), cached(x)
    assert not torch.allclose(before, after)
    torch.testing.assert_close(after, ref, rtol=1e-5, atol=1e-5)


def test_inputs_needing_a_gradient_take_the_differentiable_path(layers):
    fused, cached = layers
    x = torch.randn(3, 128, requires_grad=True)
    (g_fused,) = torch.autograd.grad(fused(x).square().sum(), x)
    (g_cached,) = torch.autograd.grad(cached(x).square().sum(), x)
    torch.testing.assert_close(g_fused, g_cached)


def test_copies_and_pickles_after_a_fused_call(layers, tmp_path):
    fused, _ = layers
    x = torch.randn(2, 128)
    with torch.no_grad():
        y = fused(x)
        twin = copy.deepcopy(fused)
        torch.save(fused, tmp_path / "layer.pt")
        loaded = torch.load(tmp_path / "layer.pt", weights_only=False)
        for other in (twin, loaded):
            assert other._kernel is None
            torch.testing.assert_close(other(x), y, rtol=0, atol=0)
