"""Parameter models of the LMS3 jobs (shared with the API route, which validates with them)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from core.device import DeviceParams
from methods.lms3.data import MATH_SUBJECTS, PoolSpec

MAX_QUERY_CHARS = 8000

Dataset = Literal["gsm8k", "mawps", "math"]
Mode = Literal["reference", "last_token", "eos_appended"]
Layer = Literal["final_norm_output", "last_layer_attn_input"]
Arm = Literal["zero_shot", "random", "cosine", "sim_only", "stab_only", "score_no_reject", "lms3"]


class PoolParams(DeviceParams):
    """Which pool and which representation (and where the model encodes: ``device``/``amp``)."""

    dataset: Dataset = Field("mawps", description="Demonstration pool: the dataset's train split.")
    pool_size: int | None = Field(
        None, ge=1, le=10000, description="Seeded random subset size (per subject for MATH); empty = full split."
    )
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Seed of the pool subset.")
    mode: Mode = Field("reference", description="Representation mode (spec §3.1).")
    layer: Layer = Field("final_norm_output", description="Representation layer (spec §3.1).")

    def pool(self) -> PoolSpec:
        return PoolSpec(self.dataset, self.pool_size, self.seed)


class IndexParams(PoolParams):
    all_representations: bool = Field(False, description="Index every mode and layer (two forward passes per item).")


class SelectParams(PoolParams):
    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="The test problem.")
    subject: str = Field("", max_length=64, description="MATH subject of the query (required for MATH).")
    arm: Arm = Field("lms3", description="Selector: LMS3 or a baseline.")
    k: int = Field(1, ge=1, le=8, description="Demonstrations (Score top-k).")
    l: float = Field(0.01, ge=0.0, le=1.0, description="Rejection fraction: λ = int(l·|D|).")  # noqa: E741
    min_lambda: int = Field(0, ge=0, le=1000, description="Lower bound on λ (0 = reference).")
    orientation: Literal["reference", "attention"] = Field("reference", description="P = W̃_K W_Q or W̃_Kᵀ W_Q.")
    normalize: Literal["none", "unit", "centred"] = Field(
        "none",
        description="Sim as in the paper (none) or, NOT the reference method, on unit-normalised x_q and P·x "
        "(unit) or pool-centred P·x (centred), which removes the pool-norm effect.",
    )
    index_if_missing: bool = Field(False, description="Index the pool first when it is not in the store.")
    generate: bool = Field(False, description="Also run the prompt through the LLM gateway.")
    max_new_tokens: int = Field(128, ge=1, le=512, description="Tokens to generate when `generate` is set.")

    @model_validator(mode="after")
    def _subject(self) -> SelectParams:
        if self.dataset == "math" and self.subject not in MATH_SUBJECTS:
            raise ValueError(f"MATH queries need subject in {', '.join(MATH_SUBJECTS)}")
        if self.dataset != "math" and self.subject:
            raise ValueError("subject applies to MATH only")
        if not self.query.strip():
            raise ValueError("query is blank")
        return self
