"""The flow's run configuration (a pydantic model: the job, the API and Agent Protocol runs validate it) and the
context every node receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from methods.ecolevels.jobs import RunnableProbe


class FlowConfig(BaseModel):
    """One flow: the model, the target task, the probes and the probe runner's sizes."""

    model: str | None = Field(None, max_length=200, description="litellm model string (default: the settings').")
    target: Literal["resume_screener", "letter_assistant"] = Field("resume_screener", description="The target task.")
    probes: list[RunnableProbe] = Field(
        [], max_length=5, description="Probes to run (empty = the §3.3 selection for the target)."
    )
    paraphrases: int = Field(2, ge=1, le=2)
    seeds: list[int] = Field([0, 1], min_length=1, max_length=10)
    n_units: int = Field(8, ge=1, le=400)
    mode: Literal["inline", "jobs"] = Field("inline", description="Run probes here or as ecolevels.probe jobs.")


@dataclass
class EcoContext:
    """What the nodes receive: ``config`` (the only field an Agent Protocol client may set) and, server-side, how
    long to wait for fanned-out probe jobs and when to run a job nobody picked up in-process."""

    config: FlowConfig = field(default_factory=FlowConfig)
    timeout_s: float = 4 * 3600
    steal_after_s: float = 20.0
