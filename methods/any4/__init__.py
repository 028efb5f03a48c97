"""any4: learned 4-bit numeric representation for LLM weights (Elhoushi & Johnson, ICML 2025).

Spec: ``shared/specs/any4.md``. Entry points: :class:`QuantConfig`,
:func:`quantize_model`, :class:`QuantLinear`, :func:`save_quantized`,
:func:`load_quantized`.
"""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "load_quantized": "methods.any4.checkpoint",
        "save_quantized": "methods.any4.checkpoint",
        "QuantConfig": "methods.any4.config",
        "QuantLinear": "methods.any4.modules",
        "quantize_model": "methods.any4.walker",
    },
)
