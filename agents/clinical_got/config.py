"""Clinical GoT's run configuration (a pydantic model, so API and Agent Protocol runs validate it) and the
context every node receives, plus the reproducer's presets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from methods.clinical_got.config import BenchConfig

__all__ = ["PRESETS", "ClinicalGotConfig", "ClinicalGotContext", "NodeBudget"]

Node = Literal["n1", "n2", "n3", "n4"]

#: Named sizes of ``paperworks reproduce clinical_got -o preset=NAME``.
PRESETS: dict[str, dict[str, Any]] = {
    # the default: minutes on two idle cores (135M on 6 cases; the 1.5B on 1 case when installed —
    # ~8 calls of ~1.2k prompt tokens per case at ~35 prompt tok/s)
    "small": dict(n_cases=6, n_cases_large=1),
    # a larger 135M run (~30 min idle) with 3 cases of the 1.5B
    "medium": dict(n_cases=24, n_cases_large=3),
    # tests and smoke runs
    "tiny": dict(n_cases=3, n_cases_large=0),
    # the spec's scale: 133 cases (hours with the local models)
    "spec": dict(n_cases=133, n_cases_large=133),
}


class NodeBudget(BaseModel):
    """Largest answer per LLM node, in tokens (the answer formats are short)."""

    model_config = ConfigDict(extra="forbid")

    n1: int = Field(24, ge=4, le=1024, description="N1 lesion grading: `[ans]: levelK, p`.")
    n2: int = Field(72, ge=4, le=1024, description="N2 lesion anatomy: ROI ids.")
    n3: int = Field(12, ge=4, le=1024, description="N3 MRI injury score: `[ans]: Score s.`.")
    n4: int = Field(8, ge=2, le=1024, description="N4 2-year outcome: `[ans]: 0/1`.")


class ClinicalGotConfig(BaseModel):
    """One case run's configuration (serialisable; the jobs, the API and the Agent Protocol accept it)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, max_length=200, description="litellm model string; default settings.llm_model.")
    bench: BenchConfig = Field(default_factory=BenchConfig, description="The synthetic benchmark the case is from.")
    visual: Literal["auto", "findings", "images", "both"] = Field(
        "auto",
        description="What stands for the images: the visual-findings adapter's text (text-only models), the PNG "
        "slice triples (vision models), or both; auto = images for vision models, else findings.",
    )
    adapter: Literal["pixels"] = Field("pixels", description="The visual-findings adapter.")
    score_knowledge: Literal["clinic", "math"] = Field(
        "clinic", description="Score knowledge text at N3 (the reference's best N3 run used 'clinic'; N4 uses 'math')."
    )
    n1_to_n2: bool = Field(False, description="Variant edge N1 → N2 (the released N2 uses images + atlas only).")
    oracle_nodes: list[Node] = Field(
        default_factory=list,
        max_length=4,
        description="Nodes answered with the ground truth instead of the model (n4: the Bayes decision).",
    )
    constrained: Literal["auto", "never"] = Field(
        "auto", description="Constrain local models to each node's answer format (regex decoding)."
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature (reference: default config).")
    budget: NodeBudget = Field(default_factory=NodeBudget)


@dataclass
class ClinicalGotContext:
    """What every node receives at run time: ``config`` (the only field an Agent Protocol client may set) and
    an optional ``on_event(node, info)`` callback for progress and streaming UIs."""

    config: ClinicalGotConfig = field(default_factory=ClinicalGotConfig)
    on_event: Callable[[str, dict[str, Any]], None] | None = None

    def emit(self, node: str, **info: Any) -> None:
        if self.on_event is not None:
            self.on_event(node, info)
