"""DPCR: dual-projection shift estimation and ridge classifier reconstruction (ICML 2025).

Spec: ``shared/specs/dpcr.md``. ``memory`` (per-class prototype, Gram, projector), ``calibration``
(TSSP and CIP), ``ridge`` (RRCR), ``train`` (LwF), ``learner`` (the harness learner with every
comparison arm), ``experiment`` (``paperworks reproduce dpcr``).
"""

from methods.dpcr.config import DPCRConfig, digits_config, tiny_config
from methods.dpcr.learner import DPCRLearner

__all__ = ["DPCRConfig", "DPCRLearner", "digits_config", "tiny_config"]
