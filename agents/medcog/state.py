"""The simulator's state: the conversation and what has been requested (all JSON-serialisable)."""

from __future__ import annotations

from typing import Any, TypedDict


class SimState(TypedDict, total=False):
    messages: list[dict[str, str]]
    """The live conversation the model sees (restarted from a summary when over budget). Overwritten."""
    transcript: list[dict[str, str]]
    """Everything said, summaries included (for the report). Overwritten."""
    phase: str
    """choose | spec:LAB | spec:IMAGE | spec:MICRO | output | done."""
    available: list[str]
    requested_labs: list[int]
    requested_micro: list[int]
    requested_imaging: list[str]
    actions_taken: list[str]
    warnings: int
    summaries: int
    diagnosis: str | None
    done: bool
    turn: int
    last_reply: str
    extra: dict[str, Any]
