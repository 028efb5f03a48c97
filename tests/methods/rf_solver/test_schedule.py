"""Spec §7.2: the FLUX schedule."""

import math

import pytest
import torch

from methods.rf_solver.schedule import flux_seq_len, get_schedule, mu_for_length, time_shift


@pytest.mark.parametrize("n", [1, 2, 5, 15, 25, 50])
@pytest.mark.parametrize("seq_len", [64, 256, 1024, 4096])
def test_endpoints_length_monotone(n, seq_len):
    ts = get_schedule(n, seq_len, shift=True)
    assert len(ts) == n + 1
    assert ts[0] == 1.0 and ts[-1] == 0.0
    assert all(a > b for a, b in zip(ts, ts[1:]))


def test_mu_anchor_points():
    assert mu_for_length(256) == pytest.approx(0.5, abs=1e-12)
    assert mu_for_length(4096) == pytest.approx(1.15, abs=1e-12)
    assert mu_for_length(2176) == pytest.approx(0.825, abs=1e-12)  # the midpoint of the line


def test_shift_off_is_linspace():
    ts = get_schedule(10, 4096, shift=False)
    assert ts == pytest.approx(torch.linspace(1, 0, 11, dtype=torch.float64).tolist(), abs=0)


def test_shift_formula_and_direction():
    mu = mu_for_length(1024)
    t = 0.3
    expected = math.exp(mu) / (math.exp(mu) + (1 / t - 1))
    assert float(time_shift(mu, torch.tensor([t], dtype=torch.float64))[0]) == pytest.approx(expected, rel=1e-12)
    # a positive shift keeps more steps at high noise: every interior time moves up
    base, shifted = get_schedule(8, shift=False), get_schedule(8, 4096, shift=True)
    assert all(s > b for s, b in zip(shifted[1:-1], base[1:-1]))


def test_flux_seq_len():
    assert flux_seq_len(1024, 1024) == 4096
    assert flux_seq_len(256, 256) == 256
