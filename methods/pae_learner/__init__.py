"""PAE's learner: online filtered behaviour cloning (trajectory filter + LoRA NLL of the kept actions)."""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "BCExample": "methods.pae_learner.bc",
    "LoRAConfig": "methods.pae_learner.bc",
    "train_bc": "methods.pae_learner.bc",
    "calculate_upperbound": "methods.pae_learner.filtering",
    "filter_trajectories": "methods.pae_learner.filtering",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.pae_learner' has no attribute {name!r}")
