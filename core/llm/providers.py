"""litellm custom providers: ``local/<model>`` (on-machine model) and ``scripted/<name>`` (tests).

Registered lazily by :func:`core.llm.gateway.ensure_providers`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import Choices, GenericStreamingChunk, Message, ModelResponse, Usage

from core.config import get_settings
from core.llm.backends.base import GenerationRequest, GenerationResult
from core.llm.backends.factory import get_backend


def _request_from(messages: list, optional_params: dict) -> GenerationRequest:
    op = dict(optional_params or {})
    stop = op.get("stop") or []
    if isinstance(stop, str):
        stop = [stop]
    json_schema = None
    rf = op.get("response_format")
    if isinstance(rf, dict):
        if rf.get("type") == "json_schema":
            js = rf.get("json_schema") or {}
            json_schema = js.get("schema", js) if isinstance(js, dict) else None
        elif rf.get("type") == "json_object":
            json_schema = {"type": "object"}
    elif rf is not None and hasattr(rf, "model_json_schema"):
        json_schema = rf.model_json_schema()
    extra_body = op.get("extra_body") or {}
    regex = op.get("regex") or extra_body.get("regex")
    grammar = op.get("grammar") or extra_body.get("grammar")
    repeat = {
        k: op.get(k, extra_body.get(k))
        for k in ("repeat_penalty", "repeat_last_n", "no_repeat_ngram")
        if op.get(k, extra_body.get(k)) is not None
    }
    return GenerationRequest(
        messages=list(messages),
        max_tokens=int(op.get("max_tokens") or op.get("max_completion_tokens") or get_settings().llm_max_tokens),
        stop=list(stop),
        temperature=float(op.get("temperature") or 0.0),
        seed=op.get("seed"),
        json_schema=json_schema,
        regex=regex,
        grammar=grammar,
        **_repeat_options(repeat),
    )


def _repeat_options(raw: dict[str, Any]) -> dict[str, Any]:
    """Validated repetition-control options (a bad value is a ValueError, i.e. a 400)."""
    out: dict[str, Any] = {}
    if "repeat_penalty" in raw:
        out["repeat_penalty"] = float(raw["repeat_penalty"])
        if not 0.5 <= out["repeat_penalty"] <= 3.0:
            raise ValueError("repeat_penalty must lie in [0.5, 3.0]")
    if "repeat_last_n" in raw:
        out["repeat_last_n"] = int(raw["repeat_last_n"])
        if not 1 <= out["repeat_last_n"] <= 4096:
            raise ValueError("repeat_last_n must lie in [1, 4096]")
    if "no_repeat_ngram" in raw:
        out["no_repeat_ngram"] = int(raw["no_repeat_ngram"])
        if not 0 <= out["no_repeat_ngram"] <= 64:
            raise ValueError("no_repeat_ngram must lie in [0, 64]")
    return out


def _response(
    model_response: ModelResponse, model: str, text: str, prompt_tokens: int, completion_tokens: int, finish: str
) -> ModelResponse:
    model_response.choices = [Choices(index=0, finish_reason=finish, message=Message(role="assistant", content=text))]
    model_response.model = model
    model_response.usage = Usage(
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=prompt_tokens + completion_tokens
    )
    model_response.created = int(time.time())
    return model_response


@contextlib.contextmanager
def _bad_request_on_value_error(model: str) -> Iterator[None]:
    """Bad options (unknown backend, invalid schema/regex/grammar, prompt too long) are a 400, not retried."""
    try:
        yield
    except ValueError as e:
        raise litellm.BadRequestError(message=str(e), model=model, llm_provider="local") from e


class LocalProvider(CustomLLM):
    """``local/<name>``: a model from the local registry, decoded on this machine."""

    def _backend(self, model: str, optional_params: dict):
        name = model.split("/", 1)[1] if model.startswith("local/") else model
        kind = (optional_params or {}).get("backend") or get_settings().local_backend
        return get_backend(kind, name)

    def completion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Callable,
        encoding,
        api_key,
        logging_obj,
        optional_params: dict,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        with _bad_request_on_value_error(model):
            req = _request_from(messages, optional_params)
            res = self._backend(model, optional_params).generate(req)
        return _response(model_response, model, res.text, res.prompt_tokens, res.completion_tokens, res.finish_reason)

    def streaming(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Callable,
        encoding,
        api_key,
        logging_obj,
        optional_params: dict,
        *args: Any,
        **kwargs: Any,
    ) -> Iterator[GenericStreamingChunk]:
        with _bad_request_on_value_error(model):
            req = _request_from(messages, optional_params)
            events = self._backend(model, optional_params).events(req)
            first = next(events, None)  # options are validated before the first piece
        final = GenerationResult(text="", prompt_tokens=0, completion_tokens=0)
        for item in itertools.chain([first] if first is not None else [], events):
            if isinstance(item, GenerationResult):
                final = item
                continue
            yield GenericStreamingChunk(
                text=item, is_finished=False, finish_reason="", usage=None, index=0, tool_use=None
            )
        n_in, n_out = final.prompt_tokens, final.completion_tokens
        yield GenericStreamingChunk(
            text="",
            is_finished=True,
            finish_reason=final.finish_reason,
            usage={"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
            index=0,
            tool_use=None,
        )

    async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        import asyncio

        return await asyncio.to_thread(self.completion, *args, **kwargs)


Script = Callable[[list[dict]], str] | list[str]
Scorer = Callable[[list[dict], list[str]], list[float]]


class ScriptedProvider(CustomLLM):
    """``scripted/<name>``: deterministic replies for tests that drive control flow.

    Install a script with :func:`core.llm.scripted` (a list of replies consumed in
    order, or a function of the messages). Every call is recorded in ``calls``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._scripts: dict[str, Script] = {}
        self._scorers: dict[str, Scorer] = {}
        self.calls: dict[str, list[list[dict]]] = {}
        self.scored: dict[str, list[tuple[list[dict], list[str]]]] = {}
        self._lock = threading.Lock()

    def set_script(self, name: str, script: Script, scorer: Scorer | None = None) -> None:
        with self._lock:
            self._scripts[name] = list(script) if isinstance(script, (list, tuple)) else script
            self.calls[name] = []
            if scorer is not None:
                self._scorers[name] = scorer

    def clear(self, name: str) -> None:
        with self._lock:
            self._scripts.pop(name, None)
            self._scorers.pop(name, None)

    def score(self, name: str, messages: list, continuations: list[str]) -> list[float]:
        """The installed scorer's log-likelihoods (the call is recorded in ``scored``)."""
        with self._lock:
            scorer = self._scorers.get(name)
            if scorer is None:
                raise ValueError(f"no scorer installed for scripted/{name}")
            self.scored.setdefault(name, []).append(
                (json.loads(json.dumps(messages, default=str)), list(continuations))
            )
        out = [float(x) for x in scorer(messages, continuations)]
        if len(out) != len(continuations):
            raise ValueError(f"scorer for scripted/{name} returned {len(out)} scores for {len(continuations)} texts")
        return out

    def completion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Callable,
        encoding,
        api_key,
        logging_obj,
        optional_params: dict,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        name = model.split("/", 1)[1] if "/" in model else model
        with self._lock:
            script = self._scripts.get(name)
            if script is None:
                raise ValueError(f"no script installed for scripted/{name}")
            self.calls.setdefault(name, []).append(json.loads(json.dumps(messages, default=str)))
            if isinstance(script, list):
                if not script:
                    raise ValueError(f"script scripted/{name} ran out of replies")
                text = script.pop(0)
            else:
                text = script(messages)
        n_prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
        return _response(model_response, model, text, n_prompt, len(text.split()), "stop")

    async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.completion(*args, **kwargs)


LOCAL = LocalProvider()
SCRIPTED = ScriptedProvider()


def register() -> None:
    """Add both providers to litellm's custom provider map (idempotent)."""
    existing = {p.get("provider") for p in (litellm.custom_provider_map or [])}
    new = [
        p
        for p in ({"provider": "local", "custom_handler": LOCAL}, {"provider": "scripted", "custom_handler": SCRIPTED})
        if p["provider"] not in existing
    ]
    if new:
        litellm.custom_provider_map = list(litellm.custom_provider_map or []) + new
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
