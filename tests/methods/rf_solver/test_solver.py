"""Spec §7.1 (Taylor form == midpoint form), §7.5 (NFE counts) and the inversion/sampling walk."""

import pytest
import torch

from methods.rf_solver.analytic import default_gaussian
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.solver import (
    NFECounter,
    midpoint_update,
    reconstruct,
    solve,
    taylor2_update,
    taylor3_update,
    walk,
)


def test_taylor_form_equals_midpoint_form():
    g = torch.Generator().manual_seed(0)
    worst = 0.0
    for h in (-0.3, -0.05, -1e-3, 0.02, 0.25):
        z, v, v_mid = (torch.randn(64, 3, 16, 16, generator=g) for _ in range(3))
        worst = max(worst, float((taylor2_update(z, v, v_mid, h) - midpoint_update(z, v_mid, h)).abs().max()))
    assert worst < 1e-6


def test_order3_taylor_is_simpson():
    g = torch.Generator().manual_seed(1)
    z, a, b, c = (torch.randn(1000, generator=g, dtype=torch.float64) for _ in range(4))
    h = -0.125
    assert torch.allclose(taylor3_update(z, a, b, c, h), z + h * (a + 4 * b + c) / 6, atol=1e-12)


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("n", [1, 4, 15])
def test_nfe_counts(order, n):
    flow = default_gaussian(4)
    x = flow.draw(8)
    res = solve(flow, x, get_schedule(n, shift=False), order, "invert")
    assert res.nfe == order * n


def test_nfe_counter_counts_calls():
    c = NFECounter(lambda z, t: z * t)
    for _ in range(7):
        c(torch.ones(2), 0.5)
    assert c.count == 7


def test_reconstruct_nfe_is_both_directions():
    flow = default_gaussian(2)
    rec = reconstruct(flow, flow.draw(4), get_schedule(10, shift=False), order=2)
    assert rec.nfe == 40


def test_walk_mirrors_steps_and_keys():
    ts = get_schedule(4, shift=True)
    down = walk(ts, "sample")
    up = walk(ts, "invert")
    assert [s[0] for s in down] == [0, 1, 2, 3]
    assert [s[0] for s in up] == [3, 2, 1, 0]  # inversion step i ↔ denoising step N−1−i
    for j, t0, t1, upper in down:
        assert (t0, t1, upper) == (ts[j], ts[j + 1], ts[j])
    for j, t0, t1, upper in up:
        assert (t0, t1, upper) == (ts[j + 1], ts[j], ts[j])  # keyed by its end (upper) time


def test_direction_and_order_validation():
    flow = default_gaussian()
    with pytest.raises(ValueError):
        solve(flow, torch.zeros(1, 1), [1.0, 0.0], order=4)
    with pytest.raises(ValueError):
        solve(flow, torch.zeros(1, 1), [0.0, 1.0], order=1)
    with pytest.raises(ValueError):
        solve(flow, torch.zeros(1, 1), [1.0, 0.0], order=1, direction="sideways")  # type: ignore[arg-type]


def test_sampling_exact_flow_on_gaussian():
    flow = default_gaussian(3)
    z1 = torch.randn(256, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    res = solve(flow, z1, get_schedule(32, shift=False), 2, "sample")
    assert float((res.z - flow.exact_sample(z1)).abs().max()) < 1e-4
