"""PAE's learner: online filtered behaviour cloning (trajectory filter + LoRA NLL of the kept actions)."""

from methods.pae_learner.bc import BCExample, LoRAConfig, train_bc
from methods.pae_learner.filtering import calculate_upperbound, filter_trajectories

__all__ = ["BCExample", "LoRAConfig", "calculate_upperbound", "filter_trajectories", "train_bc"]
