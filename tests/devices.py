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
* a Python float combined with a 0-dim float tensor (``loss * 0.9`` and its backward; inside
  ``cross_entropy`` with ``label_smoothing``) becomes a float64 constant in the TorchScript graph, so
  a float32 op downstream (``nll_loss_backward``) fails at execution ("expected scalar type Float but
  found Double"). Python-level arithmetic of a 0-dim float ``lazy`` tensor with a number turns the
  number into a 0-dim tensor of its dtype first (what type promotion gives anyway), and
  label-smoothed ``cross_entropy`` on ``lazy`` is computed as PyTorch's own formula with typed
  scalars. A scalar that C++ code adds elsewhere can still trip it: the error names no tensor of
  yours, so it is told apart from a device leak ("not a lazy tensor").

Same values and autograd; a CPU tensor mixed with a ``lazy`` one still fails. ``torch.inference_mode``
is ``torch.no_grad`` inside the block (the backend has no inference tensors). It also computes
``lerp`` (AdamW's moment update), which the backend lacks, from native ops: through the eager
fallback it cost one sync and one graph compile per parameter and step; and ``pixel_shuffle``, which
the backend gets wrong (garbage values; also in pixel_unshuffle's backward), and ``pixel_unshuffle``,
as reshape/permute.
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


def _is_number(a: Any) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool)


def _lazy_float_scalar(a: Any) -> bool:
    return isinstance(a, torch.Tensor) and a.device.type == "lazy" and a.dim() == 0 and a.is_floating_point()


def _typed(t: torch.Tensor, a: Any) -> Any:
    return torch.full((), a, dtype=t.dtype, device=t.device) if _is_number(a) else a


def _arith(op: Any, reflected: bool = False) -> Any:
    """``op`` with the Python number turned into a 0-dim tensor of the lazy 0-dim tensor's dtype."""

    def run(t: torch.Tensor, other: Any, *args: Any, **kwargs: Any) -> Any:
        other = _typed(t, other)
        return op(other, t, *args, **kwargs) if reflected else op(t, other, *args, **kwargs)

    return run


_SCALAR_OPS = {
    torch.Tensor.__mul__: _arith(torch.mul),
    torch.Tensor.__rmul__: _arith(torch.mul, reflected=True),
    torch.Tensor.__truediv__: _arith(torch.div),
    torch.Tensor.__rtruediv__: _arith(torch.div, reflected=True),
    torch.Tensor.__add__: _arith(torch.add),
    torch.Tensor.__radd__: _arith(torch.add, reflected=True),
    torch.Tensor.__sub__: _arith(torch.sub),
    torch.Tensor.__rsub__: _arith(torch.sub, reflected=True),
    torch.Tensor.mul: _arith(torch.mul),
    torch.Tensor.div: _arith(torch.div),
    torch.Tensor.add: _arith(torch.add),
    torch.Tensor.sub: _arith(torch.sub),
    torch.mul: _arith(torch.mul),
    torch.div: _arith(torch.div),
    torch.add: _arith(torch.add),
    torch.sub: _arith(torch.sub),
}


def _cross_entropy(
    input: torch.Tensor,
    target: torch.Tensor,
    weight: torch.Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> torch.Tensor | None:
    """PyTorch's label-smoothed cross-entropy over class indices (LossNLL.cpp), scalars typed; else None."""
    import torch.nn.functional as F

    if not label_smoothing or size_average is not None or reduce is not None or target.is_floating_point():
        return None
    class_dim = 1 if input.dim() >= 2 else 0
    n_classes = input.shape[class_dim]
    logp = F.log_softmax(input, class_dim)
    nll = F.nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    ignore = target == ignore_index
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        smooth = -(logp * weight.view(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            taken = weight.gather(0, target.masked_fill(ignore, 0).flatten()).masked_fill(ignore.flatten(), 0)
            ret = smooth.sum() / taken.sum()
        else:
            ret = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    one_minus = torch.full((), 1 - label_smoothing, dtype=nll.dtype, device=nll.device)
    per_class = torch.full((), label_smoothing / n_classes, dtype=ret.dtype, device=ret.device)
    return nll * one_minus + ret * per_class


def _lerp(t: torch.Tensor, end: torch.Tensor, weight: Any) -> torch.Tensor:
    return t + (end - t) * weight


def _lerp_(t: torch.Tensor, end: torch.Tensor, weight: Any) -> torch.Tensor:
    return t.add_(end - t, alpha=weight) if _is_number(weight) else t.add_((end - t) * weight)


def _pixel_shuffle(t: torch.Tensor, upscale_factor: int) -> torch.Tensor:
    r, (*lead, c, h, w) = upscale_factor, t.shape
    x = t.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(t: torch.Tensor, downscale_factor: int) -> torch.Tensor:
    r, (*lead, c, h, w) = downscale_factor, t.shape
    x = t.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# Ops the TorchScript backend lacks: each would run on the CPU through the eager fallback, one sync (and
# one graph compile) per call; AdamW's lerp_ per parameter made a training step ~4x slower. Same math.
# And pixel_shuffle, which the backend computes WRONG (values of order 1e35 on a 1x1 conv's output); it is
# pixel_unshuffle's backward, so both become reshape/permute (whose backward is right).
_FALLBACKS = {
    torch.lerp: _lerp,
    torch.Tensor.lerp: _lerp,
    torch.Tensor.lerp_: _lerp_,
    torch.pixel_shuffle: _pixel_shuffle,
    torch.nn.functional.pixel_shuffle: _pixel_shuffle,
    torch.pixel_unshuffle: _pixel_unshuffle,
    torch.nn.functional.pixel_unshuffle: _pixel_unshuffle,
}


class _LazyWorkarounds(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        import torch.nn.functional as F

        kwargs = kwargs or {}
        lazy = bool(args) and isinstance(args[0], torch.Tensor) and args[0].device.type == "lazy"
        if lazy and func in _VIEWS:
            return _VIEWS[func](*args, **kwargs)
        if lazy and func in _FALLBACKS:
            return _FALLBACKS[func](*args, **kwargs)
        if func in _SCALAR_OPS and len(args) >= 2 and _lazy_float_scalar(args[0]) and _is_number(args[1]):
            return _SCALAR_OPS[func](*args, **kwargs)
        if lazy and func is F.cross_entropy:
            out = _cross_entropy(*args, **kwargs)
            if out is not None:
                return out
        return func(*args, **kwargs)


def _inference_mode(mode: bool = True) -> Any:
    return torch.no_grad() if mode else contextlib.nullcontext()


@contextlib.contextmanager
def lazy_safe_views() -> Iterator[None]:
    """Inside the block (this thread), work around the lazy backend's defects (module docstring).

    ``torch.inference_mode`` (looked up at call time) is ``torch.no_grad`` inside the block: the lazy
    backend has no inference tensors (every view op under it fails: "aten::view ... has no
    implementation for the backend lazy"); the numbers are the same.
    """
    real = torch.inference_mode
    torch.inference_mode = _inference_mode  # type: ignore[assignment]
    try:
        with _LazyWorkarounds():
            yield
    finally:
        torch.inference_mode = real  # type: ignore[assignment]


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
