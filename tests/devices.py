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

Two defects of the lazy backend need patches, both applied by :func:`lazy_safe_views` (entered by
the device-leak test around each job):

* the outputs of the multi-output view ops (``split``/``split_with_sizes``/``chunk``/``unbind``, and
  so iterating over a tensor) claim to be ``lazy``, yet the next op on one runs on the CPU and returns
  a CPU tensor (``x.chunk(2)[0] * 2`` is a CPU tensor; a ``Linear`` on it fails "Input tensor is not a
  lazy tensor") — a false leak. Computed as ``narrow``/``select`` views instead;
* a Python float combined with a 0-dim float tensor (``loss * 0.9``, and inside ``cross_entropy``
  with ``label_smoothing``, in forward or backward) becomes a float64 constant in the TorchScript
  graph, so the result is float64 where PyTorch promises float32, and the step fails at execution
  ("expected scalar type Float but found Double"). The scalar is made a 0-dim tensor of the other
  operand's dtype first (what type promotion gives for a Python number).

Same values and autograd; a CPU tensor mixed with a ``lazy`` one still fails.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator
from typing import Any

import torch
from pydantic import BaseModel
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode


@functools.cache
def stand_in_device() -> torch.device:
    """The ``lazy`` device, initialised once per process (TorchScript backend)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch._lazy
        import torch._lazy.ts_backend

        torch._lazy.ts_backend.init()
    return torch.device("lazy")


def _split(t: torch.Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[torch.Tensor, ...]:
    dim = dim % t.dim()
    n = t.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
    out, start = [], 0
    for size in sizes:
        out.append(t.narrow(dim, start, size))
        start += size
    return tuple(out)


def _chunk(t: torch.Tensor, chunks: int, dim: int = 0) -> tuple[torch.Tensor, ...]:
    n = t.shape[dim % t.dim()]
    return _split(t, -(-n // chunks) if n else 1, dim)


def _unbind(t: torch.Tensor, dim: int = 0) -> tuple[torch.Tensor, ...]:
    dim = dim % t.dim()
    return tuple(t.select(dim, i) for i in range(t.shape[dim]))


_VIEWS = {
    torch.split: _split,
    torch.Tensor.split: _split,
    torch.Tensor.split_with_sizes: _split,
    torch.chunk: _chunk,
    torch.Tensor.chunk: _chunk,
    torch.unbind: _unbind,
    torch.Tensor.unbind: _unbind,
}


class _SingleOutputViews(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        impl = _VIEWS.get(func)
        if impl is not None and args and isinstance(args[0], torch.Tensor) and args[0].device.type == "lazy":
            return impl(*args, **kwargs)
        return func(*args, **kwargs)


_ARITHMETIC = ("mul", "div", "add", "sub", "rsub")


class _TypedScalars(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        t = args[0] if args else None
        if (
            func.overloadpacket.__name__ in _ARITHMETIC
            and isinstance(t, torch.Tensor)
            and t.device.type == "lazy"
            and t.dim() == 0
            and t.is_floating_point()
            and any(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args[1:])
        ):
            args = (
                t,
                *(
                    torch.full((), a, dtype=t.dtype, device=t.device)
                    if isinstance(a, (int, float)) and not isinstance(a, bool)
                    else a
                    for a in args[1:]
                ),
            )
            name = func._overloadname.replace("Scalar", "Tensor")
            func = getattr(func.overloadpacket, name, func)
        return func(*args, **kwargs)


@contextlib.contextmanager
def lazy_safe_views() -> Iterator[None]:
    """Inside the block (this thread), work around the lazy backend's two defects (module docstring)."""
    with _SingleOutputViews(), _TypedScalars():
        yield


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
