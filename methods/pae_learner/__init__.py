"""PAE's learner: online filtered behaviour cloning (trajectory filter + LoRA NLL of the kept actions)."""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BCExample": "methods.pae_learner.bc",
        "LoRAConfig": "methods.pae_learner.bc",
        "train_bc": "methods.pae_learner.bc",
        "calculate_upperbound": "methods.pae_learner.filtering",
        "filter_trajectories": "methods.pae_learner.filtering",
    },
)
