"""any4: learned 4-bit numeric representation for LLM weights (Elhoushi & Johnson, ICML 2025).

Spec: ``shared/specs/any4.md``. Entry points: :class:`QuantConfig`,
:func:`quantize_model`, :class:`QuantLinear`, :func:`save_quantized`,
:func:`load_quantized`.
"""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "load_quantized": "methods.any4.checkpoint",
    "save_quantized": "methods.any4.checkpoint",
    "QuantConfig": "methods.any4.config",
    "QuantLinear": "methods.any4.modules",
    "quantize_model": "methods.any4.walker",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.any4' has no attribute {name!r}")
