"""Ecological validity of a probe *for a target task* (spec §3.1): five binary features, EV = sum / 5.

(i) same task type, (ii) naturalistic inputs when the deployment's are, (iii) same output format,
(iv) same group signalling, (v) same interaction framing. Bands: low < 0.4 ≤ medium < 0.8 ≤ high.
EV has no meaning without a target: every function here takes one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from methods.ecolevels.classify import Level
from methods.ecolevels.registry import GroupSignal, OutputFormat, ProbeMetadata

FEATURES = ("task_type", "naturalistic_inputs", "output_format", "group_signal", "interaction_framing")


class TargetTask(BaseModel):
    """The deployment a claim is about (e.g. "will our résumé screener disadvantage women?")."""

    name: str = Field(..., min_length=1, max_length=120)
    question: str = Field("", max_length=500)
    level: Level = Field("L4", description="The level of the claim (a behavioural claim is L4).")
    task_type: str = Field(..., max_length=60)
    naturalistic_inputs: bool = True
    output_format: OutputFormat = "forced_choice"
    group_signal: GroupSignal = "name"
    interaction_framing: str = Field("screening_system", max_length=60)


RESUME_SCREENER = TargetTask(
    name="résumé screener",
    question="Will the deployed résumé screener disadvantage women?",
    level="L4",
    task_type="resume_screening",
    naturalistic_inputs=True,
    output_format="forced_choice",
    group_signal="name",
    interaction_framing="screening_system",
)
LETTER_ASSISTANT = TargetTask(
    name="reference-letter assistant",
    question="Will the writing assistant describe women less agentically in reference letters?",
    level="L4",
    task_type="letter_generation",
    naturalistic_inputs=True,
    output_format="free_text",
    group_signal="name",
    interaction_framing="assistant_chat",
)
TARGETS = {"resume_screener": RESUME_SCREENER, "letter_assistant": LETTER_ASSISTANT}


def features(meta: ProbeMetadata, target: TargetTask) -> dict[str, int]:
    return {
        "task_type": int(meta.task_type == target.task_type),
        "naturalistic_inputs": int(meta.naturalistic_inputs == target.naturalistic_inputs),
        "output_format": int(meta.output_format == target.output_format),
        "group_signal": int(meta.group_signal == target.group_signal),
        "interaction_framing": int(meta.interaction_framing == target.interaction_framing),
    }


def ecological_validity(meta: ProbeMetadata, target: TargetTask) -> float:
    """EV of the (probe, target) pair in [0, 1]."""
    return sum(features(meta, target).values()) / len(FEATURES)


def band(ev: float) -> Literal["low", "medium", "high"]:
    return "low" if ev < 0.4 else ("high" if ev >= 0.8 else "medium")
