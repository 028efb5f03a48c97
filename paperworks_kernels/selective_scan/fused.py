"""The fused CPU selective scan: forward and backward in one C++ kernel each (``impl="fused"``).

The kernel (``paperworks_kernels/cpu/src/selective_scan.cpp``) runs one task per (batch element,
block of channels), the channels of a block in the lanes of a SIMD vector and the N states of each
channel in registers, so a step costs its d·N exponentials and a few fused multiply-adds, and no
tensor is allocated per step. Δ bias, softplus, D and the SiLU(z) gate are fused in. Operands are
read through their strides (the callers' transposed views cost no copy).

Backward: the forward keeps the state at the start of every chunk of ``chunk`` steps
(b·d·N·L/chunk values; only when a gradient is needed). The backward pass walks the chunks in
reverse, recomputes each chunk's states from its stored start, and runs the adjoint recurrence
``dh_{t−1} = e^{Δ_t·A} ⊙ (dh_t)``, ``dh_t += dy_t·C_t``. It returns the gradients of u, Δ (through
softplus), z, D, A, Δ bias, B and C, and also accepts a gradient of the returned last state.

fp32 and fp64 run natively (fp64 uses libm's exp and log1p lane by lane: it is there for
``torch.autograd.gradcheck``); fp16/bf16 inputs are computed in fp32 and the output is cast back,
as in the reference. N > ``max_state()`` (256) is not supported: :func:`supports` says so and
``impl="auto"`` then uses the chunked scan.
"""

from __future__ import annotations

import ctypes

import torch

from paperworks_kernels.cpu import library
from paperworks_kernels.selective_scan.reference import ScanShape, check_scan_inputs, per_channel

_I64 = ctypes.c_int64
_VP = ctypes.c_void_p


class _ScanArgs(ctypes.Structure):
    """Mirror of ``struct PwScanArgs`` in selective_scan.cpp (same field order and types)."""

    _fields_ = [
        (name, _I64)
        for name in (
            "batch",
            "dim",
            "length",
            "state",
            "head_dim",
            "scalar_a",
            "softplus",
            "chunk",
            "nthreads",
            "double_precision",
        )
    ] + [(name, _I64 * 3) for name in ("su", "sdelta", "sz", "sb", "sc", "sy", "sdy")]
    _fields_ += [
        (name, _VP)
        for name in (
            "u",
            "delta",
            "A",
            "B",
            "C",
            "D",
            "z",
            "bias",
            "y",
            "hlast",
            "ckpt",
            "dy",
            "dhlast",
            "du",
            "ddelta",
            "dz",
            "dD",
            "dA",
            "dB",
            "dC",
        )
    ]


def available() -> bool:
    """True when the compiled kernel library can be used (builds it on the first call)."""
    return library() is not None


def max_state() -> int:
    lib = library()
    return lib.pw_scan_max_state() if lib is not None else 0


def supports(u: torch.Tensor, A: torch.Tensor, B: torch.Tensor, arch: str = "native") -> bool:  # noqa: N803
    """Whether the fused kernel handles these operands (CPU tensors, N ≤ max_state())."""
    if u.device.type != "cpu" or library(arch) is None:
        return False
    n = A.shape[1] if A.dim() == 2 else (B.shape[1] if B.dim() == 3 else 0)
    return 0 < n <= max_state()


def chunk_length(state: int) -> int:
    """Steps per checkpoint: the backward pass keeps 2·chunk·N·lanes values of one chunk in cache."""
    return max(8, min(64, 1024 // max(1, state)))


def _ptr(t: torch.Tensor | None) -> int | None:
    return t.data_ptr() if t is not None else None


def _strides(t: torch.Tensor | None) -> tuple[int, int, int]:
    return tuple(t.stride()) if t is not None else (0, 0, 0)


def _prepare(shape: ScanShape, dtype: torch.dtype, A, D, delta_bias):
    a = A.to(dtype).contiguous()
    d = per_channel(D.to(dtype), shape).contiguous() if D is not None else None
    bias = delta_bias.to(dtype).contiguous() if delta_bias is not None else None
    return a, d, bias


def _args(shape: ScanShape, dtype, softplus: bool, chunk: int, tensors: dict) -> _ScanArgs:
    lib_threads = torch.get_num_threads()
    a = _ScanArgs()
    a.batch, a.dim, a.length, a.state = shape.batch, shape.dim, shape.length, shape.state
    a.head_dim, a.scalar_a, a.softplus, a.chunk = shape.head_dim, int(shape.scalar_a), int(softplus), chunk
    a.nthreads, a.double_precision = lib_threads, int(dtype == torch.float64)
    for field, key in (
        ("su", "u"),
        ("sdelta", "delta"),
        ("sz", "z"),
        ("sb", "B"),
        ("sc", "C"),
        ("sy", "y"),
        ("sdy", "dy"),
    ):
        getattr(a, field)[:] = _strides(tensors.get(key))
    for key, value in tensors.items():
        setattr(a, key, _ptr(value))
    return a


def _channels_last(shape: ScanShape, like: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A (b, d, L) tensor in (b, L, d) memory: the kernel writes one vector of channels per step."""
    return like.new_empty((shape.batch, shape.length, shape.dim), dtype=dtype).transpose(1, 2)


def _forward(lib, shape, dtype, softplus, chunk, u, delta, a, B, C, d, z, bias, keep: bool):
    y = _channels_last(shape, u, dtype)
    hlast = u.new_empty((shape.batch, shape.dim, shape.state), dtype=dtype)
    ckpt = None
    if keep:
        lanes = lib.pw_vector_lanes()
        nblk = -(-shape.dim // lanes)
        nchunk = -(-shape.length // chunk)
        ckpt = u.new_empty((shape.batch, nblk, nchunk, shape.state, lanes), dtype=dtype)
    t = {"u": u, "delta": delta, "A": a, "B": B, "C": C, "D": d, "z": z, "bias": bias, "y": y, "hlast": hlast}
    t["ckpt"] = ckpt
    rc = lib.pw_scan_forward(ctypes.byref(_args(shape, dtype, softplus, chunk, t)))
    if rc:
        raise ValueError(f"fused selective scan rejected its operands (code {rc})")
    return y, hlast, ckpt


def _cast(t: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    return t if t is None or t.dtype == dtype else t.to(dtype)


class _FusedScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, arch, softplus, u, delta, A, B, C, D, z, delta_bias):  # noqa: N803 - the paper's symbols
        shape = check_scan_inputs(u, delta, A, B, C, D, z, delta_bias)
        dtype = torch.float64 if u.dtype == torch.float64 else torch.float32
        uu, dd, bb, cc, zz = (_cast(t, dtype) for t in (u, delta, B, C, z))
        a, d, bias = _prepare(shape, dtype, A, D, delta_bias)
        chunk = chunk_length(shape.state)
        keep = any(ctx.needs_input_grad[2:])
        lib = library(arch)
        y, hlast, ckpt = _forward(lib, shape, dtype, softplus, chunk, uu, dd, a, bb, cc, d, zz, bias, keep)
        ctx.lib = lib
        ctx.meta = (shape, dtype, softplus, chunk, D is not None and D.shape[0] == shape.dim)
        ctx.dtypes = tuple(t.dtype if t is not None else None for t in (u, delta, A, B, C, D, z, delta_bias))
        ctx.save_for_backward(uu, dd, a, bb, cc, d, zz, bias, ckpt)
        return y.to(u.dtype), hlast

    @staticmethod
    def backward(ctx, gy, gh):
        shape, dtype, softplus, chunk, d_per_channel = ctx.meta
        uu, dd, a, bb, cc, d, zz, bias, ckpt = ctx.saved_tensors
        lib = ctx.lib
        b, dim, L, n = shape.batch, shape.dim, shape.length, shape.state
        h, p = shape.heads, shape.head_dim
        nblk = -(-dim // lib.pw_vector_lanes())
        gy = _cast(gy, dtype) if gy is not None else uu.new_zeros(uu.shape, dtype=dtype)
        gh = _cast(gh, dtype).contiguous() if gh is not None else None
        new = uu.new_empty
        out = {
            "du": _channels_last(shape, uu, dtype),
            "ddelta": _channels_last(shape, uu, dtype),
            "dz": _channels_last(shape, uu, dtype) if zz is not None else None,
            "dD": new((b, dim), dtype=dtype),
            "dA": new((b, dim) if shape.scalar_a else (b, dim, n), dtype=dtype),
            "dB": new((b, nblk, L, n), dtype=dtype),
            "dC": new((b, nblk, L, n), dtype=dtype),
        }
        t = {"u": uu, "delta": dd, "A": a, "B": bb, "C": cc, "D": d, "z": zz, "bias": bias, "ckpt": ckpt}
        t.update(dy=gy, dhlast=gh, **out)
        rc = lib.pw_scan_backward(ctypes.byref(_args(shape, dtype, softplus, chunk, t)))
        if rc:
            raise ValueError(f"fused selective scan backward rejected its operands (code {rc})")
        ddelta = out["ddelta"] if p == 1 else out["ddelta"].unflatten(1, (h, p)).sum(2)
        dA = out["dA"].sum(0)
        if shape.scalar_a:
            dA = dA.view(h, p).sum(1)
        dD = out["dD"].sum(0)
        if not d_per_channel:
            dD = dD.view(h, p).sum(1)
        grads = (
            out["du"],
            ddelta,
            dA,
            out["dB"].sum(1).transpose(1, 2),
            out["dC"].sum(1).transpose(1, 2),
            dD,
            out["dz"],
            ddelta.sum((0, 2)),
        )
        needs = ctx.needs_input_grad[2:]
        return (None, None, *(g.to(dt) if need else None for g, dt, need in zip(grads, ctx.dtypes, needs)))


def selective_scan_fused(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = False,
    return_last_state: bool = False,
    *,
    arch: str = "native",
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Same signature and result as the reference, computed by the fused CPU kernel (differentiable).

    The last state is returned in fp32 (fp64 for fp64 inputs) and y in (b, L, d) memory (a
    transposed view: one vector of channels is written per step, and both models transpose y
    next). ``arch`` picks a build of the kernel library (the tests check the 8-lane AVX2 build
    on an AVX-512 machine with ``"haswell"``).

    Raises:
        RuntimeError: the kernel library is unavailable or the operands are unsupported (check
            :func:`supports` first; ``selective_scan(impl="auto")`` does).
    """
    if not supports(u, A, B, arch):
        raise RuntimeError(
            "the fused CPU selective scan needs CPU tensors, N <= 256 and the compiled kernels "
            "(see paperworks_kernels.cpu.status())"
        )
    shape = check_scan_inputs(u, delta, A, B, C, D, z, delta_bias)
    if shape.length == 0 or shape.batch == 0 or shape.dim == 0:  # nothing to scan (as the chunked scan)
        h = u.new_zeros((shape.batch, shape.dim, shape.state), dtype=torch.float32)
        return (u.clone(), h) if return_last_state else u.clone()
    y, h = _FusedScan.apply(arch, delta_softplus, u, delta, A, B, C, D, z, delta_bias)
    return (y, h) if return_last_state else y
