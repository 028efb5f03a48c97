"""Fused CPU kernels (selective scan forward/backward, packed 4-bit LUT GEMM), compiled on this machine.

The C++ sources in ``src/`` are compiled once per machine by the system's C++ compiler into a small
shared library under the cache directory and called through :mod:`ctypes` (no Python headers, no
PyTorch headers: the build takes seconds, see :mod:`paperworks_kernels.cpu.build`). Nothing is built
at import: the first call of :func:`library` (made by ``impl="auto"`` dispatch on a CPU tensor)
builds or loads it. Without a compiler, or with ``PAPERWORKS_CPU_KERNELS=off``, :func:`library`
returns ``None`` and the callers use their PyTorch implementations; :func:`status` says which.
"""

from __future__ import annotations

from paperworks_kernels.cpu.build import KernelStatus, library, status

__all__ = ["KernelStatus", "library", "status"]
