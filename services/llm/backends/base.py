"""The interface every local text-generation backend implements."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class GenerationRequest:
    """One chat completion to decode greedily (temperature 0) unless ``temperature`` > 0."""

    messages: list[dict[str, Any]]
    max_tokens: int = 256
    stop: list[str] = field(default_factory=list)
    temperature: float = 0.0
    seed: int | None = None
    # Structured output: a JSON schema (dict) or a regular expression (str); backends
    # that cannot honour a constraint raise ValueError.
    json_schema: dict[str, Any] | None = None
    regex: str | None = None


@dataclass
class GenerationResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"  # "stop" or "length"


class Backend(Protocol):
    name: str

    def generate(self, req: GenerationRequest) -> GenerationResult: ...

    def stream(self, req: GenerationRequest) -> Iterator[str]: ...


def truncate_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """Cut ``text`` at the first stop string; returns (text, whether a stop matched)."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


@functools.lru_cache(maxsize=8)
def get_backend(kind: str, model_name: str) -> Backend:
    """A cached backend instance for a local model."""
    if kind in ("transformers", "auto"):
        from services.llm.backends.hf import TransformersBackend

        return TransformersBackend(model_name)
    raise ValueError(f"unknown local backend {kind!r}; choose one of: transformers, auto")
