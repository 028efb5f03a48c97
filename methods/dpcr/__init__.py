"""DPCR: dual-projection shift estimation and ridge classifier reconstruction (ICML 2025).

Spec: ``shared/specs/dpcr.md``. ``memory`` (per-class prototype, Gram, projector), ``calibration``
(TSSP and CIP), ``ridge`` (RRCR), ``train`` (LwF), ``learner`` (the harness learner with every
comparison arm), ``experiment`` (``paperworks reproduce dpcr``).
"""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DPCRConfig": "methods.dpcr.config",
        "digits_config": "methods.dpcr.config",
        "tiny_config": "methods.dpcr.config",
        "DPCRLearner": "methods.dpcr.learner",
    },
)
