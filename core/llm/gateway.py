"""The LLM gateway: every chat/vision completion in paperworks goes through here.

:func:`complete` wraps ``litellm.completion`` with the configured model, timeouts,
retries and API base, and returns a small typed :class:`Completion`. The default
model is ``local/smollm2-135m-instruct`` (on this machine); any litellm model
string (``openai/gpt-4o``, ``ollama/llama3``, ``hosted_vllm/...``) works unchanged.

Images (paths, bytes or PIL images) are sent interleaved as OpenAI ``image_url``
content parts to models litellm knows to support vision; text-only models get a
note instead, so callers should pass tool-extracted text (OCR, EXIF) as well.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import io
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import get_settings
from core.llm import allowlist

_setup_lock = threading.Lock()
_providers_ready = False


def _litellm():
    global _providers_ready
    import litellm

    if not _providers_ready:
        with _setup_lock:
            if not _providers_ready:
                litellm.telemetry = False
                litellm.suppress_debug_info = True
                from core.llm import providers

                providers.register()
                _providers_ready = True
    return litellm


def ensure_providers() -> None:
    """Register the ``local`` and ``scripted`` providers with litellm."""
    _litellm()


@dataclass
class Completion:
    """One completion: its text and what it cost."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = "stop"

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.latency_s if self.latency_s > 0 else 0.0


@dataclass
class UsageTally:
    """Calls and tokens counted while a :func:`track_usage` block is active."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    by_tag: dict[str, int] = field(default_factory=dict)

    def add(self, c: Completion, tag: str | None) -> None:
        self.calls += 1
        self.prompt_tokens += c.prompt_tokens
        self.completion_tokens += c.completion_tokens
        self.seconds += c.latency_s
        if tag:
            self.by_tag[tag] = self.by_tag.get(tag, 0) + 1


_tally: contextvars.ContextVar[UsageTally | None] = contextvars.ContextVar("llm_usage", default=None)


@contextlib.contextmanager
def track_usage() -> Iterator[UsageTally]:
    """Count every gateway call made inside the block (also from nested calls)."""
    tally = UsageTally()
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


def default_model() -> str:
    return get_settings().llm_model


def supports_vision(model: str) -> bool:
    if model.startswith(("local/", "scripted/")):
        return False
    try:
        return bool(_litellm().supports_vision(model=model))
    except Exception:
        return False


def image_part(image: Any) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part from a path, bytes or PIL image (as a data URL)."""
    if isinstance(image, (str, Path)):
        data = Path(image).read_bytes()
    elif isinstance(image, (bytes, bytearray)):
        data = bytes(image)
    else:  # PIL image
        buf = io.BytesIO()
        image.convert("RGB").save(buf, format="JPEG", quality=90)
        data = buf.getvalue()
    mime = "image/png" if data[:8] == b"\x89PNG\r\n\x1a\n" else "image/jpeg"
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}}


def build_messages(
    prompt: str | Sequence[Any] | None = None,
    *,
    system: str | None = None,
    messages: list[dict[str, Any]] | None = None,
    model: str | None = None,
) -> list[dict[str, Any]]:
    """Messages from a prompt that may interleave text and images.

    ``prompt`` is a string or a sequence of strings and images (paths/bytes/PIL). For
    a vision model images become ``image_url`` parts in place; for a text-only model
    they are replaced by ``[image N]`` markers.
    """
    model = model or default_model()
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    if messages:
        out.extend(messages)
    if prompt is not None:
        if isinstance(prompt, str):
            out.append({"role": "user", "content": prompt})
        else:
            vision = supports_vision(model)
            parts: list[dict[str, Any]] = []
            n_img = 0
            for item in prompt:
                if isinstance(item, str):
                    parts.append({"type": "text", "text": item})
                else:
                    n_img += 1
                    parts.append(image_part(item) if vision else {"type": "text", "text": f"[image {n_img}]"})
            if vision:
                out.append({"role": "user", "content": parts})
            else:
                out.append({"role": "user", "content": "".join(p["text"] for p in parts)})
    return out


def complete(
    prompt: str | Sequence[Any] | None = None,
    *,
    messages: list[dict[str, Any]] | None = None,
    system: str | None = None,
    model: str | None = None,
    max_tokens: int | None = None,
    temperature: float = 0.0,
    stop: list[str] | None = None,
    response_format: dict[str, Any] | type | None = None,
    regex: str | None = None,
    tag: str | None = None,
    **extra: Any,
) -> Completion:
    """One chat completion through litellm.

    Args:
        prompt: user text, or a sequence interleaving text and images.
        messages: OpenAI-style messages (prepended before ``prompt``).
        model: litellm model string; default ``settings.llm_model``.
        max_tokens: default ``settings.llm_max_tokens``.
        temperature: 0 (greedy) by default.
        stop: stop strings (removed from the returned text).
        response_format: litellm/OpenAI ``response_format`` (``{"type": "json_schema", ...}``).
        regex: a regular expression the local provider constrains its output to.
        tag: a label counted in :func:`track_usage` tallies (e.g. the agent stage).
    """
    settings = get_settings()
    model = allowlist.check_model(model or settings.llm_model)
    msgs = build_messages(prompt, system=system, messages=messages, model=model)
    if not msgs:
        raise ValueError("complete() needs a prompt or messages")
    kwargs: dict[str, Any] = dict(
        model=model,
        messages=msgs,
        temperature=temperature,
        max_tokens=max_tokens or settings.llm_max_tokens,
        timeout=settings.llm_timeout_s,
        num_retries=settings.llm_max_retries,
    )
    if stop:
        kwargs["stop"] = list(stop)
    if response_format is not None:
        kwargs["response_format"] = response_format
    if regex is not None:
        kwargs["regex"] = regex
    if allowlist.gets_credentials(model):  # only a model the operator configured by name
        if settings.llm_api_base:
            kwargs["api_base"] = settings.llm_api_base
        if settings.llm_api_key is not None:
            kwargs["api_key"] = settings.llm_api_key.get_secret_value()
    kwargs.update(extra)
    for k in ("api_key", "api_base", "base_url"):
        if k in extra and not allowlist.gets_credentials(model):
            raise allowlist.ModelNotAllowed(model, k)
    litellm = _litellm()
    t0 = time.perf_counter()
    resp = litellm.completion(**kwargs)
    dt = time.perf_counter() - t0
    choice = resp.choices[0]
    usage = getattr(resp, "usage", None)
    c = Completion(
        text=choice.message.content or "",
        model=model,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        latency_s=dt,
        finish_reason=choice.finish_reason or "stop",
    )
    tally = _tally.get()
    if tally is not None:
        tally.add(c, tag)
    return c


def stream(
    prompt: str | None = None,
    *,
    messages: list[dict[str, Any]] | None = None,
    model: str | None = None,
    max_tokens: int | None = None,
    stop: list[str] | None = None,
    **extra: Any,
) -> Iterator[str]:
    """Yield the completion text piece by piece (allowed models only; no credentials are sent)."""
    settings = get_settings()
    model = allowlist.check_model(model or settings.llm_model)
    msgs = build_messages(prompt, messages=messages, model=model)
    resp = _litellm().completion(
        model=model,
        messages=msgs,
        stream=True,
        temperature=0.0,
        max_tokens=max_tokens or settings.llm_max_tokens,
        stop=stop,
        **extra,
    )
    for chunk in resp:
        delta = chunk.choices[0].delta
        if getattr(delta, "content", None):
            yield delta.content


class ScoringUnsupported(RuntimeError):
    """The model cannot score continuations (only local and scripted models expose their likelihoods)."""


@dataclass
class Scores:
    """Log-likelihoods of candidate continuations of one prompt, and what computing them cost."""

    logprobs: list[float]
    n_tokens: list[int]
    model: str
    prompt_tokens: int = 0
    latency_s: float = 0.0


def score(
    prompt: str | Sequence[Any] | None,
    continuations: list[str],
    *,
    system: str | None = None,
    model: str | None = None,
    tag: str | None = None,
) -> Scores:
    """How likely the model finds each continuation as the start of its reply (teacher forcing).

    Local models score on their backend (llama.cpp batches the candidates into the same
    steps); ``scripted/`` models use the scorer installed with :func:`scripted`. Hosted
    models raise :class:`ScoringUnsupported`: litellm has no common way to read the
    likelihood of a given reply, so callers fall back to generating one.
    """
    if not continuations:
        raise ValueError("score() needs at least one continuation")
    settings = get_settings()
    model = allowlist.check_model(model or settings.llm_model)
    msgs = build_messages(prompt, system=system, model=model)
    t0 = time.perf_counter()
    if model.startswith("scripted/"):
        _litellm()
        from core.llm.providers import SCRIPTED

        logprobs = SCRIPTED.score(model.split("/", 1)[1], msgs, continuations)
        n_tokens, n_prompt = [len(c.split()) for c in continuations], 0
    elif model.startswith("local/"):
        from core.llm.backends.factory import get_backend

        res = get_backend(settings.local_backend, model.split("/", 1)[1]).score(msgs, continuations)
        logprobs, n_tokens = [r.logprob for r in res], [r.n_tokens for r in res]
        n_prompt = max((r.prompt_tokens for r in res), default=0)
    else:
        raise ScoringUnsupported(f"{model} does not expose the likelihood of a given reply; only local models do")
    out = Scores(logprobs, n_tokens, model, n_prompt * len(continuations), time.perf_counter() - t0)
    tally = _tally.get()
    if tally is not None:
        tally.add(Completion("", model, out.prompt_tokens, 0, out.latency_s), tag)
    return out


@contextlib.contextmanager
def scripted(name: str, script: Any, scorer: Any = None) -> Iterator[Any]:
    """Install a reply script (and optionally a ``scorer(messages, continuations) -> logprobs``) for model
    ``scripted/<name>`` during the block (tests)."""
    _litellm()
    from core.llm.providers import SCRIPTED

    SCRIPTED.set_script(name, script, scorer)
    try:
        yield SCRIPTED
    finally:
        SCRIPTED.clear(name)
