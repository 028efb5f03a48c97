"""Fixtures for the any4 GEMM kernel tests (the interpreter/CUDA runner is ``tests/kernels/conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch


@pytest.fixture(scope="session")
def gemm(kernel_runner) -> Callable[..., torch.Tensor]:
    """``gemm(x, packed, lut, scales_and_zeros, g, **kw)`` → the kernel's output on the CPU."""
    return kernel_runner("paperworks_kernels.any4_gemm.kernel:any4_gemm")
