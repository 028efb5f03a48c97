"""any4: learned 4-bit numeric representation for LLM weights (Elhoushi & Johnson, ICML 2025).

Spec: ``shared/specs/any4.md``. Entry points: :class:`QuantConfig`,
:func:`quantize_model`, :class:`QuantLinear`, :func:`save_quantized`,
:func:`load_quantized`.
"""

from methods.any4.checkpoint import load_quantized, save_quantized
from methods.any4.config import QuantConfig
from methods.any4.modules import QuantLinear
from methods.any4.walker import quantize_model

__all__ = ["QuantConfig", "QuantLinear", "load_quantized", "quantize_model", "save_quantized"]
