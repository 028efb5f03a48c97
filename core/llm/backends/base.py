"""The interface every local text-generation backend implements (the factory is in :mod:`.factory`).

Backends (``settings.local_backend``):

* ``llamacpp``: llama.cpp (llama-cpp-python) on the model's GGUF file, with concurrent
  requests decoded together in one batch (:mod:`core.llm.backends.llamacpp`);
* ``transformers``: the registry's transformers model (:mod:`core.llm.backends.hf`),
  the reference that methods needing hidden states, logits or LoRA share;
* ``auto`` (default): llama.cpp when the binding and a GGUF file are there, else
  transformers, saying why in one log line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

BACKENDS = ("llamacpp", "transformers", "auto")


class BackendUnavailable(RuntimeError):
    """A backend cannot run here (binding not installed, model file missing)."""


@dataclass
class GenerationRequest:
    """One chat completion to decode greedily (temperature 0) unless ``temperature`` > 0."""

    messages: list[dict[str, Any]]
    max_tokens: int = 256
    stop: list[str] = field(default_factory=list)
    temperature: float = 0.0
    seed: int | None = None
    # Structured output: at most one of a JSON schema (dict), a regular expression or a
    # grammar; an invalid one raises ConstraintError (a ValueError) before decoding.
    json_schema: dict[str, Any] | None = None
    regex: str | None = None
    grammar: str | None = None  # a Lark or GBNF grammar (see backends.constraints)
    # Repetition control (off by default, so greedy replies stay comparable across backends):
    # llama.cpp's repeat penalty over the reply's last ``repeat_last_n`` tokens (a logit > 0 is
    # divided by it, one < 0 multiplied), and a hard block of any ``no_repeat_ngram``-gram the
    # reply already contains (0 = off).
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    no_repeat_ngram: int = 0


@dataclass
class GenerationResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"  # "stop" or "length"
    token_ids: list[int] = field(default_factory=list)  # the reply's tokens (end-of-turn excluded)


@dataclass
class ContinuationScore:
    """How likely the model finds one continuation of a chat prompt (teacher forcing, no sampling)."""

    text: str
    logprob: float  # sum over the continuation's tokens of log p(token | prompt, earlier tokens)
    n_tokens: int
    prompt_tokens: int


class Backend(Protocol):
    name: str

    def score(self, messages: list[dict[str, Any]], continuations: list[str]) -> list[ContinuationScore]:
        """Log-likelihood of each continuation as the start of the assistant's reply to ``messages``."""
        ...

    def generate(self, req: GenerationRequest) -> GenerationResult: ...

    def stream(self, req: GenerationRequest) -> Iterator[str]: ...

    def events(self, req: GenerationRequest) -> Iterator[str | GenerationResult]:
        """Text pieces as they are decoded, then the final :class:`GenerationResult`."""
        ...


def continuation_ids(tokenizer: Any, continuation: str) -> list[int]:
    """The continuation's token ids as they follow the assistant turn header (which ends a line, so the
    continuation tokenizes on its own exactly as inside the full text)."""
    ids = list(tokenizer(continuation, add_special_tokens=False)["input_ids"])
    if not ids:
        raise ValueError("cannot score an empty continuation")
    return ids


def truncate_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """Cut ``text`` at the first stop string; returns (text, whether a stop matched)."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
