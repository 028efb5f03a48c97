"""Selective scan (Mamba-1 S6, and the Mamba-2 scalar-A-per-head variant) in three implementations.

* :func:`selective_scan_reference` — the sequential fp32 loop (ground truth);
* :func:`selective_scan_chunked` — vectorised and chunked PyTorch (CPU speed, autograd);
* ``selective_scan_triton`` — the Triton kernel, imported lazily (Triton loads on first use);
* :func:`selective_scan` — picks one: ``impl="auto"`` is Triton on CUDA, chunked elsewhere.

The variant follows from A's shape: (d, N) is Mamba-1, (heads,) is Mamba-2 with Δ (b, heads, L).
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from paperworks_kernels.selective_scan.chunked import selective_scan_chunked
from paperworks_kernels.selective_scan.reference import ScanShape, check_scan_inputs, selective_scan_reference

Impl = Literal["auto", "reference", "chunked", "triton"]

__all__ = [
    "Impl",
    "ScanShape",
    "check_scan_inputs",
    "selective_scan",
    "selective_scan_chunked",
    "selective_scan_reference",
    "selective_scan_triton",
]


def resolve_impl(impl: Impl, device: torch.device) -> str:
    """``auto`` → ``triton`` on CUDA, ``chunked`` elsewhere."""
    if impl == "auto":
        return "triton" if device.type == "cuda" else "chunked"
    if impl not in ("reference", "chunked", "triton"):
        raise ValueError(f"unknown selective-scan implementation {impl!r}")
    return impl


def selective_scan(*args: Any, impl: Impl = "auto", **kwargs: Any) -> Any:
    """Run the selective scan with the chosen implementation (same arguments as the reference)."""
    chosen = resolve_impl(impl, args[0].device if args else kwargs["u"].device)
    if chosen == "reference":
        return selective_scan_reference(*args, **kwargs)
    if chosen == "chunked":
        return selective_scan_chunked(*args, **kwargs)
    from paperworks_kernels.selective_scan.kernel import selective_scan_triton

    return selective_scan_triton(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "selective_scan_triton":
        from paperworks_kernels.selective_scan.kernel import selective_scan_triton

        return selective_scan_triton
    raise AttributeError(name)
