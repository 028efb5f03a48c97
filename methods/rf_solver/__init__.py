"""RF-Solver (exact-error rectified-flow sampling/inversion) and RF-Edit (V sharing), spec rf_solver.md.

Public entry points; everything else lives in the submodules (``solver``, ``schedule``,
``analytic``, ``model``, ``vcache``, ``edit``, ``adapters``).
"""

from methods.rf_solver.edit import rf_edit
from methods.rf_solver.model import RFDiT
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.solver import reconstruct, solve

__all__ = ["RFDiT", "get_schedule", "reconstruct", "rf_edit", "solve"]
