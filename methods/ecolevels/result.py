"""One probe's measured bias on one model (what a run returns, what the flow places, reconciles and reports)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from methods.ecolevels.classify import Level
from methods.ecolevels.registry import Probe
from methods.ecolevels.validity import TargetTask, band, ecological_validity


class ProbeResult(BaseModel):
    """One probe's measured bias on one model, placed on the two axes for one target."""

    probe_id: str
    name: str
    construct_key: str
    level: Level
    ev: float | None = None
    ev_band: str | None = None
    effect: float
    ci_low: float
    ci_high: float
    n_units: int = Field(..., description="Distinct units (stimuli) the index and its interval are computed over.")
    units: dict[str, list[Any]] = Field(
        default_factory=dict, description="keys and values: each distinct unit's stimulus and its mean value."
    )
    runs: list[dict[str, Any]] = Field(default_factory=list, description="Per (paraphrase, seed) index and details.")
    moderators: dict[str, str] = Field(default_factory=dict)
    model: str = ""
    run_id: str | None = None

    @property
    def verdict(self) -> Literal["bias", "reverse", "null"]:
        if self.ci_low > 0:
            return "bias"
        if self.ci_high < 0:
            return "reverse"
        return "null"

    def place(self, probe: Probe, target: TargetTask) -> ProbeResult:
        ev = ecological_validity(probe.metadata, target)
        return self.model_copy(update={"ev": ev, "ev_band": band(ev)})
