"""The simulator's run configuration (a pydantic model, so Agent Protocol runs validate it) and the context every
node receives.

``SimConfig`` is everything a client may choose: which synthetic case (disease, index, case seed), the model and
the sampling. ``SimContext`` adds what stays on the server: a prebuilt case (the batch job passes its own), the
token counter and the context budget, derived from the model when not given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from methods.medcog.cases import DISEASES, Case, make_case
from methods.medcog.environment import CONTEXT_TOKENS, MAX_TURNS, TEMPERATURE

Disease = Literal[DISEASES]  # type: ignore[valid-type]


class SimConfig(BaseModel):
    """One episode: the case to diagnose and how the model is asked."""

    model_config = ConfigDict(extra="forbid")

    disease: Disease = Field(DISEASES[0], description="The synthetic case's disease (its template).")
    case_index: int = Field(0, ge=0, le=19, description="Which case of that disease (deterministic in case_seed).")
    case_seed: int = Field(2024, ge=0, le=2**31 - 1, description="Seed of the case generator.")
    model: str | None = Field(None, max_length=200, description="litellm model string (default: the settings').")
    seed: int = Field(2024, ge=0, le=2**31 - 1, description="Sampling seed (the paper: 2024).")
    max_turns: int = Field(MAX_TURNS, ge=2, le=MAX_TURNS)
    temperature: float = Field(TEMPERATURE, ge=0.0, le=2.0)


def context_budget(model: str) -> int:
    """4 096 tokens, or the local backend's per-reply context when that is smaller."""
    if model.startswith("local/"):
        from core.config import get_settings

        return min(CONTEXT_TOKENS, get_settings().local_context)
    return CONTEXT_TOKENS


@dataclass
class SimContext:
    """What every node receives: ``config`` (the only field an Agent Protocol client may set) and, server-side,
    a prebuilt ``case`` (else built from the config), the token ``count`` function and the ``budget``."""

    config: SimConfig = field(default_factory=SimConfig)
    case: Case | None = None
    count: Callable[[str], int] | None = None
    budget: int | None = None
    data_dir: Path | None = None

    @property
    def model(self) -> str:
        from core.config import get_settings

        return self.config.model or get_settings().llm_model

    def the_case(self) -> Case:
        if self.case is None:
            c = self.config
            self.case = make_case(c.disease, c.case_index, c.case_seed, self.data_dir)
        return self.case

    def counter(self) -> Callable[[str], int]:
        if self.count is None:
            from methods.llm_eval.tokens import token_counter

            self.count = token_counter(self.model)
        return self.count

    def token_budget(self) -> int:
        if self.budget is None:
            self.budget = context_budget(self.model)
        return self.budget
