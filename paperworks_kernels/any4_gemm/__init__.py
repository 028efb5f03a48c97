"""any4 LUT-GEMM: packing format, PyTorch reference and (lazily) the Triton kernel.

``from paperworks_kernels.any4_gemm import any4_gemm`` imports Triton on first use only, so
CPU code that needs just the packing or the reference never touches it.
"""

from __future__ import annotations

from typing import Any

from paperworks_kernels.any4_gemm.packing import NIBBLE_ORDER, make_scales_and_zeros, pack_nibbles, unpack_nibbles
from paperworks_kernels.any4_gemm.reference import any4_gemm_reference, dequantize

__all__ = [
    "NIBBLE_ORDER",
    "any4_gemm",
    "any4_gemm_reference",
    "dequantize",
    "make_scales_and_zeros",
    "pack_nibbles",
    "unpack_nibbles",
]


def __getattr__(name: str) -> Any:
    if name == "any4_gemm":
        from paperworks_kernels.any4_gemm.kernel import any4_gemm

        return any4_gemm
    raise AttributeError(name)
