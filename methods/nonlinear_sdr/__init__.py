"""Nonlinear sufficient dimension reduction by ensembles of principal machines (spec nonlinear_sdr.md).

Linear, kernel and neural principal SVMs over an ensemble of classification problems built from
the response, with SIR/SAVE/DR/pHd as comparators, behind one scikit-learn estimator.
"""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PrincipalMachineSDR": "methods.nonlinear_sdr.estimator",
    },
)
