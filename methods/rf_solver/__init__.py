"""RF-Solver (exact-error rectified-flow sampling/inversion) and RF-Edit (V sharing), spec rf_solver.md.

Public entry points; everything else lives in the submodules (``solver``, ``schedule``,
``analytic``, ``model``, ``vcache``, ``edit``, ``adapters``).
"""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "rf_edit": "methods.rf_solver.edit",
        "RFDiT": "methods.rf_solver.model",
        "get_schedule": "methods.rf_solver.schedule",
        "reconstruct": "methods.rf_solver.solver",
        "solve": "methods.rf_solver.solver",
    },
)
