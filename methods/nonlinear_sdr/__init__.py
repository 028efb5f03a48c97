"""Nonlinear sufficient dimension reduction by ensembles of principal machines (spec nonlinear_sdr.md).

Linear, kernel and neural principal SVMs over an ensemble of classification problems built from
the response, with SIR/SAVE/DR/pHd as comparators, behind one scikit-learn estimator.
"""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "PrincipalMachineSDR": "methods.nonlinear_sdr.estimator",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.nonlinear_sdr' has no attribute {name!r}")
