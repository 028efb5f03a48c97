"""Running a job on another device in tests: a stand-in accelerator on CPU-only machines.

A GPU is rare where this suite runs, yet the bug it must catch — a tensor built on the CPU
behind the caller's back (``torch.zeros(n)`` in a loss, ``torch.arange`` in a mask) — shows
only when the model lives somewhere else. PyTorch's lazy-tensor device (``lazy``, on its
TorchScript backend, part of every CPU build) is such a place: it computes real numbers on
the CPU, yet an op that mixes a ``lazy`` tensor with a CPU tensor of one or more dimensions
fails ("Input tensor is not a lazy tensor"), and ``.numpy()`` on it fails — as on CUDA.
0-dim CPU tensors and Python scalars mix freely, as on CUDA. Unlike ``meta`` (shapes only),
a whole job runs to its report, metrics included.

:func:`params_on` builds a job's params for a device its params model does not list
(``lazy``): validated with ``device="cpu"``, then the field replaced.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import torch
from pydantic import BaseModel


@functools.cache
def stand_in_device() -> torch.device:
    """The ``lazy`` device, initialised once per process (TorchScript backend)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch._lazy
        import torch._lazy.ts_backend

        torch._lazy.ts_backend.init()
    return torch.device("lazy")


def params_on(model: type[BaseModel], values: dict[str, Any], device: str | torch.device) -> BaseModel:
    """``model(**values)`` validated on ``cpu``, then with ``device`` put in place (no re-validation)."""
    params = model.model_validate({**values, "device": "cpu"})
    return params.model_copy(update={"device": str(device)})


def cuda_or_skip() -> torch.device:
    """``cuda`` where this machine has it; skips the calling test elsewhere."""
    import pytest

    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    return torch.device("cuda")
