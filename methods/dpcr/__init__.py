"""DPCR: dual-projection shift estimation and ridge classifier reconstruction (ICML 2025).

Spec: ``shared/specs/dpcr.md``. ``memory`` (per-class prototype, Gram, projector), ``calibration``
(TSSP and CIP), ``ridge`` (RRCR), ``train`` (LwF), ``learner`` (the harness learner with every
comparison arm), ``experiment`` (``paperworks reproduce dpcr``).
"""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "DPCRConfig": "methods.dpcr.config",
    "digits_config": "methods.dpcr.config",
    "tiny_config": "methods.dpcr.config",
    "DPCRLearner": "methods.dpcr.learner",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.dpcr' has no attribute {name!r}")
