"""Selective scan (Mamba-1 S6, and the Mamba-2 scalar-A-per-head variant) in four implementations.

* :func:`selective_scan_reference` — the sequential fp32 loop (ground truth);
* :func:`selective_scan_chunked` — vectorised and chunked PyTorch (autograd; the CPU fallback);
* :func:`selective_scan_fused` — the fused C++ CPU kernel, forward and backward
  (:mod:`paperworks_kernels.selective_scan.fused`; compiled on first use, needs a C++ compiler);
* ``selective_scan_triton`` — the Triton kernel, imported lazily (Triton loads on first use);
* :func:`selective_scan` — picks one by the tensors' device: ``impl="auto"`` is Triton on CUDA,
  the fused kernel on a CPU when it is available (else the chunked scan), chunked elsewhere.

The variant follows from A's shape: (d, N) is Mamba-1, (heads,) is Mamba-2 with Δ (b, heads, L).
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from paperworks_kernels.selective_scan import fused
from paperworks_kernels.selective_scan.chunked import selective_scan_chunked
from paperworks_kernels.selective_scan.fused import selective_scan_fused
from paperworks_kernels.selective_scan.reference import ScanShape, check_scan_inputs, selective_scan_reference

Impl = Literal["auto", "reference", "chunked", "fused", "triton"]
CHUNKED_OPTIONS = ("chunk", "max_log_decay")  # keyword arguments only the chunked scan takes

__all__ = [
    "Impl",
    "ScanShape",
    "check_scan_inputs",
    "selective_scan",
    "selective_scan_chunked",
    "selective_scan_fused",
    "selective_scan_reference",
    "selective_scan_triton",
]


def resolve_impl(impl: Impl, device: torch.device) -> str:
    """``auto`` → ``triton`` on CUDA, ``fused`` on a CPU when the compiled kernel is available, else ``chunked``."""
    if impl == "auto":
        if device.type == "cuda":
            return "triton"
        return "fused" if device.type == "cpu" and fused.available() else "chunked"
    if impl not in ("reference", "chunked", "fused", "triton"):
        raise ValueError(f"unknown selective-scan implementation {impl!r}")
    return impl


def active_cpu_impl() -> str:
    """What ``impl="auto"`` runs on a CPU tensor, in words (for ``paperworks doctor``)."""
    from paperworks_kernels.cpu import status

    st = status()
    if st.available:
        return f"fused C++ kernel ({st.isa}, {st.lanes} lanes)"
    return f"chunked PyTorch scan ({st.detail})"


def selective_scan(*args: Any, impl: Impl = "auto", **kwargs: Any) -> Any:
    """Run the selective scan with the chosen implementation (same arguments as the reference).

    ``chunk`` and ``max_log_decay`` are passed to the chunked scan and ignored by the others, so a
    caller may tune the CPU fallback without knowing which implementation ``auto`` picks. With
    ``impl="auto"`` operands the fused kernel does not take (N > 256) go to the chunked scan.
    """
    u = args[0] if args else kwargs["u"]
    chosen = resolve_impl(impl, u.device)
    if chosen == "fused" and impl == "auto":
        a = args[2] if len(args) > 2 else kwargs["A"]
        b = args[3] if len(args) > 3 else kwargs["B"]
        if not fused.supports(u, a, b):
            chosen = "chunked"
    if chosen == "chunked":
        return selective_scan_chunked(*args, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k not in CHUNKED_OPTIONS}
    if chosen == "reference":
        return selective_scan_reference(*args, **kwargs)
    if chosen == "fused":
        return selective_scan_fused(*args, **kwargs)
    from paperworks_kernels.selective_scan.kernel import selective_scan_triton

    return selective_scan_triton(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "selective_scan_triton":
        from paperworks_kernels.selective_scan.kernel import selective_scan_triton

        return selective_scan_triton
    raise AttributeError(name)
