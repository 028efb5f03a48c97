"""The flow's state (JSON-serialisable; checkpointed after every node)."""

from __future__ import annotations

from typing import Any, TypedDict


class InputState(TypedDict, total=False):
    """Nothing is required: what to run comes from the run context's ``config``
    (:class:`agents.ecolevels.config.FlowConfig`); ``select`` writes the three keys below into the state."""

    target: dict[str, Any]
    """A :class:`methods.ecolevels.validity.TargetTask` as JSON."""
    model: str
    settings: dict[str, Any]
    """paraphrases, seeds, n_units, mode (inline | jobs), probes (optional explicit list)."""


class FlowState(InputState, total=False):
    selection: list[dict[str, Any]]
    """Chosen probes with role (evidence / diagnostic), level and EV. Overwritten by select."""
    raw: list[dict[str, Any]]
    """ProbeResult JSON per probe as measured. Overwritten by run."""
    placed: list[dict[str, Any]]
    """Results with level and EV for the target. Overwritten by place."""
    conflicts: list[dict[str, Any]]
    predictions: list[dict[str, Any]]
    report: dict[str, Any]
