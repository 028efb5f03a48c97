"""FourierMamba (ICML 2025): Mamba selective scans in Fourier space for single-image deraining.

Spec: ``../shared/specs/fourier_mamba.md``. The selective scan lives in :mod:`paperworks_kernels.selective_scan`.
"""
