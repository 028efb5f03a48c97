"""Fixtures for the selective-scan kernel tests (the interpreter/CUDA runner is ``tests/kernels/conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensors: one torch thread (two were much slower on the busy 2-core machine)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def triton_scan(kernel_runner) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """``triton_scan(u, delta, A, B, C, D, z, bias, softplus, out=...)`` → (y, h_last) on the CPU."""
    return kernel_runner("paperworks_kernels.selective_scan.kernel:selective_scan_triton_forward")
