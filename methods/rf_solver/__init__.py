"""RF-Solver (exact-error rectified-flow sampling/inversion) and RF-Edit (V sharing), spec rf_solver.md.

Public entry points; everything else lives in the submodules (``solver``, ``schedule``,
``analytic``, ``model``, ``vcache``, ``edit``, ``adapters``).
"""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "rf_edit": "methods.rf_solver.edit",
    "RFDiT": "methods.rf_solver.model",
    "get_schedule": "methods.rf_solver.schedule",
    "reconstruct": "methods.rf_solver.solver",
    "solve": "methods.rf_solver.solver",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.rf_solver' has no attribute {name!r}")
