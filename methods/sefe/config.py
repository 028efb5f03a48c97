"""SEFE options (spec §3 and §6), the comparison arms, and named presets.

The paper's scale (LLaVA-1.5-7B, r = 128, 8 CoIN tasks, 8 GPUs) is out of reach on a shared CPU;
what is shrunk is said in every report: the model (SmolLM2-135M-Instruct with LoRA on its top
``adapt_layers`` decoder layers), examples per task, test items, epochs and answer length.
The algorithm is not: fresh LoRA + merge per task, unscaled B·A top-2 % per matrix, the
concatenated index lists, the L1 penalty averaged per matrix then over matrices, λ·L_reg on
every step, ASD with X % split equally over the four non-native styles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from methods.sefe.tasks import TASK_ORDER, TASKS


@dataclass(frozen=True)
class TrainSettings:
    """The per-task LoRA schedule (spec §6 values by default)."""

    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.05
    lr: float = 2e-4
    warmup_ratio: float = 0.03
    weight_decay: float = 0.0
    epochs: int = 1
    batch_size: int = 8
    max_length: int = 256


Arm = Literal["seq", "asd", "reglora", "sefe", "multitask"]
ALL_ARMS: tuple[Arm, ...] = ("seq", "asd", "reglora", "sefe", "multitask")
ARM_LABELS: dict[str, str] = {
    "seq": "sequential LoRA",
    "asd": "ASD only",
    "reglora": "RegLoRA only",
    "sefe": "SEFE (ASD + RegLoRA)",
    "multitask": "multitask (upper bound)",
}
TaskName = Literal["iris", "cancer", "wine", "digits"]


class SefeConfig(BaseModel):
    """One SEFE experiment: the task sequence, the LoRA schedule, ASD, RegLoRA, the arms and seeds."""

    model_config = ConfigDict(extra="forbid")

    tasks: tuple[TaskName, ...] = Field(TASK_ORDER, min_length=2, max_length=4, description="Task order.")
    adapt_layers: int | None = Field(
        None,
        ge=1,
        le=30,
        description="LoRA on the top k decoder layers of SmolLM2-135M (None: all 30, the spec); the frozen "
        "lower layers' outputs are computed once and cached.",
    )
    rank: int = Field(8, ge=1, le=64, description="LoRA rank r.")
    alpha: float = Field(16.0, gt=0, le=4096, description="LoRA α (the forward uses W + (α/r)·B A).")
    lr: float = Field(2e-4, gt=0, le=1e-2, description="Peak learning rate (cosine, 3 % warm-up).")
    epochs: int = Field(1, ge=1, le=10, description="Epochs per task.")
    batch_size: int = Field(8, ge=1, le=64)
    max_length: int = Field(256, ge=32, le=1024, description="Max tokens per training example.")
    n_train: int = Field(600, ge=4, le=600, description="Training examples per task (spec cap 600).")
    n_test: int = Field(150, ge=2, le=150, description="Test items per task (spec cap 150).")
    asd_percent: float = Field(20.0, ge=0, le=100, description="ASD proportion X (% rewritten) for ASD arms.")
    lam: float = Field(2.5e3, ge=0, le=1e7, description="RegLoRA weight λ for RegLoRA arms.")
    key_fraction: float = Field(0.02, gt=0, le=0.5, description="Fraction of |B·A| entries kept as key elements.")
    lam_sweep: tuple[float, ...] = Field(
        (), max_length=4, description="Extra RegLoRA-only arms with these λ (spec §6 sweep {0, 250, 2.5e3, 2.5e4})."
    )
    sweep_seeds: int | None = Field(
        None,
        ge=1,
        le=10,
        description="The λ-sweep arms run on the first k seeds only (None: on every seed).",
    )
    multitask_seeds: int | None = Field(
        None,
        ge=1,
        le=10,
        description="The multitask upper bound runs on the first k seeds only (None: on every seed).",
    )
    arms: tuple[Arm, ...] = Field(ALL_ARMS, min_length=1, description="Arms to run.")
    seeds: tuple[int, ...] = Field(
        (0, 1, 2),
        min_length=1,
        max_length=10,
        description="Seeds (training subsample, LoRA init, batch order, ASD draws).",
    )
    max_new_tokens: int = Field(8, ge=2, le=64, description="Greedy answer length at evaluation.")
    eval_batch: int = Field(16, ge=1, le=128)
    threads: int = Field(1, ge=1, le=16, description="torch threads.")

    @model_validator(mode="after")
    def _check(self) -> SefeConfig:
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError("tasks must not repeat")
        if len(set(self.arms)) != len(self.arms):
            raise ValueError("arms must not repeat")
        if any(t not in TASKS for t in self.tasks):
            raise ValueError(f"unknown task in {self.tasks}")
        return self

    def train_settings(self) -> TrainSettings:
        return TrainSettings(
            rank=self.rank,
            alpha=self.alpha,
            lr=self.lr,
            epochs=self.epochs,
            batch_size=self.batch_size,
            max_length=self.max_length,
        )

    def arm_plan(self) -> list[tuple[str, float, float]]:
        """``(arm id, ASD X %, λ)`` of every sequential arm (multitask is separate)."""
        plan = {
            "seq": (0.0, 0.0),
            "asd": (self.asd_percent, 0.0),
            "reglora": (0.0, self.lam),
            "sefe": (self.asd_percent, self.lam),
        }
        out = [(a, *plan[a]) for a in self.arms if a in plan]
        out += [(f"reglora_l{lam:g}", 0.0, float(lam)) for lam in self.lam_sweep if lam != self.lam]
        return out

    def arm_plan_for(self, seed_index: int) -> list[tuple[str, float, float]]:
        """:meth:`arm_plan` for the ``seed_index``-th seed: the λ-sweep arms only within ``sweep_seeds``."""
        sweep = self.sweep_seeds is None or seed_index < self.sweep_seeds
        return [p for p in self.arm_plan() if sweep or not p[0].startswith("reglora_l")]


#: Named presets, overriding :class:`SefeConfig`'s defaults (which are the spec §6 caps).
PRESETS: dict[str, dict] = {
    # tests and smoke runs: 2 tasks, a few examples, 2 layers, 1 seed
    "tiny": {
        "tasks": ["iris", "cancer"],
        "adapt_layers": 1,
        "n_train": 8,
        "n_test": 4,
        "seeds": [0],
        "arms": ["seq", "sefe", "multitask"],
        "max_new_tokens": 4,
    },
    # docs/results/sefe.md on the 2-core machine: LoRA on the top 8 of 30 layers, ≤ 200 examples × 3 epochs per
    # task in batches of 4 (84–150 steps), lr 1e-3 and α/r = 16, 40 test items, 5 seeds of the four sequential
    # arms (issue #49: the paired differences need ≥ 5), the λ sweep {250, 2.5e4} beside λ = 2.5e3 and the
    # multitask upper bound on the first seed. Measured on iris alone: at batch 8 (42 steps) every answer was one
    # class (31.6 % = majority), at batch 4 (84 steps) 97.4 %; with the top 4 layers instead of 8, 34 % (also one
    # class)
    "cpu": {
        "adapt_layers": 8,
        "alpha": 128.0,
        "lr": 1e-3,
        "batch_size": 4,
        "n_train": 200,
        "n_test": 40,
        "epochs": 3,
        "lam_sweep": [250.0, 25000.0],
        "sweep_seeds": 1,
        "multitask_seeds": 1,
        "seeds": [0, 1, 2, 3, 4],
    },
    # the first version of the cpu preset (top 4 layers, 32 examples × 2 epochs, 20 test items): about an
    # hour, but no task is learned beyond its majority answer, so it shows superficial forgetting only
    "cpu-small": {
        "adapt_layers": 4,
        "alpha": 128.0,
        "lr": 1e-3,
        "batch_size": 4,
        "n_train": 32,
        "n_test": 20,
        "epochs": 2,
    },
    # the spec §6 caps on the full 30-layer model with the λ sweep (hours on a CPU)
    "spec": {"lam_sweep": [250.0, 25000.0], "epochs": 1},
}


def preset_config(name: str, **overrides) -> SefeConfig:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return SefeConfig(**{**PRESETS[name], **overrides})
