"""Nonlinear sufficient dimension reduction by ensembles of principal machines (spec nonlinear_sdr.md).

Linear, kernel and neural principal SVMs over an ensemble of classification problems built from
the response, with SIR/SAVE/DR/pHd as comparators, behind one scikit-learn estimator.
"""

from methods.nonlinear_sdr.estimator import PrincipalMachineSDR

__all__ = ["PrincipalMachineSDR"]
