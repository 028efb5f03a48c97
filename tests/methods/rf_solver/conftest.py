"""Fixtures for the RF-Solver tests: a tiny DiT trained once per machine (cached under the test cache dir)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensors gain nothing from intra-op threads, and on a shared 2-core machine spinning
    OpenMP threads make them ~40x slower; run these tests single-threaded, then restore."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_model():
    """The "tiny" preset (≈97k parameters, 150 steps on digits), trained on first use and cached."""
    from methods.rf_solver.checkpoints import get_model

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, _ = get_model("tiny")
    finally:
        torch.set_num_threads(before)
    return model


@pytest.fixture(scope="session")
def tiny_velocity(tiny_model):
    from methods.rf_solver.edit import DiTVelocity

    return DiTVelocity(tiny_model)


@pytest.fixture(scope="session")
def held_out_digits():
    from methods.rf_solver.data import load_digits_split

    return load_digits_split("test")
