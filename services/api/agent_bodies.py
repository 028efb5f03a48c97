"""Request bodies of the Agent Protocol routes (:mod:`services.api.routes.agent_protocol`), as LangGraph's SDK
sends them: fields the SDK sends that we do not support are ignored; every size and count is bounded."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class AssistantSearch(BaseModel):
    model_config = ConfigDict(extra="ignore")
    graph_id: str | None = Field(None, max_length=100)
    metadata: dict[str, Any] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=1_000_000)


class ThreadCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")
    thread_id: str | None = Field(None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"


class ThreadSearch(BaseModel):
    model_config = ConfigDict(extra="ignore")
    metadata: dict[str, Any] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=1_000_000)


class HistoryRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    limit: int = Field(10, ge=1, le=1000)


class CommandIn(BaseModel):
    """LangGraph's ``Command``: resume an ``interrupt()``, update the state, or go to nodes."""

    model_config = ConfigDict(extra="forbid")
    resume: Any = None
    update: dict[str, Any] | None = None
    goto: str | list[str] | None = None


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="ignore")
    recursion_limit: int = Field(100, ge=1, le=10_000)
    configurable: dict[str, Any] | None = Field(None, description="Only checkpoint_id is read.")


class RunCreate(BaseModel):
    """A run, as LangGraph's SDK sends it (fields it sends that we do not support are ignored)."""

    model_config = ConfigDict(extra="ignore")
    assistant_id: str = Field(..., min_length=1, max_length=100)
    input: dict[str, Any] | None = None
    command: CommandIn | None = None
    config: RunConfig | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    stream_mode: str | list[str] = "values"
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    checkpoint_id: str | None = Field(None, max_length=100)
    checkpoint: dict[str, Any] | None = None
    multitask_strategy: Literal["reject"] | None = None
    on_disconnect: Literal["cancel", "continue"] = "cancel"
    on_completion: Literal["delete", "keep"] | None = None
    if_not_exists: Literal["create", "reject"] = "reject"
