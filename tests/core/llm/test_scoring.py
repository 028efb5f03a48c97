"""Scoring given continuations (teacher forcing) on both local backends and through the gateway."""

from __future__ import annotations

import math
import threading

import pytest

from core.llm import ScoringUnsupported, score, scripted
from core.llm.backends.base import continuation_ids
from core.llm.backends.chat import prompt_ids, text_messages

from .conftest import HAS_LLAMA_CPP, MODEL, NO_LLAMA_CPP

QUESTION = [{"role": "user", "content": "What is the capital of France? Answer with the city only."}]
CITIES = ["Paris", "Berlin", "`refuted`", "not enough evidence"]


def test_continuations_tokenize_as_inside_the_whole_text(tokenizer):
    """Scoring tokenizes the reply on its own; that must equal its tokens inside prompt + reply."""
    text = tokenizer.apply_chat_template(text_messages(QUESTION), tokenize=False, add_generation_prompt=True)
    ids = prompt_ids(tokenizer, QUESTION)
    for cont in CITIES:
        whole = tokenizer(text + cont, add_special_tokens=False)["input_ids"]
        assert whole == ids + continuation_ids(tokenizer, cont), cont
    with pytest.raises(ValueError, match="empty"):
        continuation_ids(tokenizer, "")


def test_transformers_scores_are_the_models_log_probabilities(hf_backend):
    import torch

    from core.llm.local_models import get_local_model

    lm = get_local_model(MODEL)
    res = hf_backend.score(QUESTION, CITIES)
    ids = prompt_ids(lm.tokenizer, QUESTION)
    for r in res:
        cont = continuation_ids(lm.tokenizer, r.text)
        want = 0.0
        with torch.inference_mode():  # token by token, the slow way
            for k, tok in enumerate(cont):
                logits = lm.model(input_ids=torch.tensor([ids + cont[:k]])).logits[0, -1].float()
                want += float(torch.log_softmax(logits, -1)[tok])
        assert r.logprob == pytest.approx(want, abs=1e-3)
        assert r.n_tokens == len(cont) and r.prompt_tokens == len(ids)
    by = {r.text: r.logprob for r in res}
    assert by["Paris"] > by["Berlin"] + 2  # the model knows the answer
    assert all(r.logprob < 0 for r in res)


@pytest.mark.skipif(not HAS_LLAMA_CPP, reason=NO_LLAMA_CPP)
def test_llamacpp_scores_match_transformers_and_batching(llamacpp_backend, hf_backend):
    ref = hf_backend.score(QUESTION, CITIES)
    engine = llamacpp_backend.engine()
    fed0 = engine.fed
    together = llamacpp_backend.score(QUESTION, CITIES)  # the prompt once, then each continuation
    # the prompt is fed once, each continuation without its last token (read off the previous logits)
    assert engine.fed - fed0 == ref[0].prompt_tokens + sum(r.n_tokens - 1 for r in ref)
    alone = [llamacpp_backend.score(QUESTION, [c])[0] for c in CITIES]
    for r, t, a in zip(ref, together, alone, strict=True):
        assert t.text == r.text and t.n_tokens == r.n_tokens and t.prompt_tokens == r.prompt_tokens
        assert t.logprob == pytest.approx(a.logprob, abs=0.05)  # with the others = alone, up to float noise
        assert t.logprob == pytest.approx(r.logprob, abs=0.35 * r.n_tokens + 0.2)  # quantized weights
    assert max(together, key=lambda s: s.logprob).text == max(ref, key=lambda s: s.logprob).text == "Paris"


@pytest.mark.skipif(not HAS_LLAMA_CPP, reason=NO_LLAMA_CPP)
def test_llamacpp_scoring_runs_beside_generation(llamacpp_backend):
    """A reply being decoded and a scoring job share the engine without disturbing each other."""
    from core.llm.backends.base import GenerationRequest

    req = GenerationRequest(messages=QUESTION, max_tokens=16)
    alone = llamacpp_backend.generate(req)
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("gen", llamacpp_backend.generate(req)))
    t.start()
    scores = llamacpp_backend.score(QUESTION, CITIES)
    t.join(timeout=60)
    assert out["gen"].token_ids == alone.token_ids
    assert len(scores) == 4 and all(math.isfinite(s.logprob) for s in scores)


def test_gateway_scores_local_and_scripted_models_and_refuses_hosted_ones(monkeypatch):
    res = score(
        "What is the capital of France? Answer with the city only.", ["Paris", "Berlin"], model=f"local/{MODEL}"
    )
    assert res.logprobs[0] > res.logprobs[1] and res.n_tokens[0] >= 1 and res.prompt_tokens > 0
    seen = []

    def scorer(messages, conts):
        seen.append((messages[-1]["content"], conts))
        return [-float(len(c)) for c in conts]

    with scripted("scorer-test", ["unused"], scorer=scorer):
        out = score("pick", ["a", "bbb"], model="scripted/scorer-test")
    assert out.logprobs == [-1.0, -3.0] and seen == [("pick", ["a", "bbb"])]
    with pytest.raises(ValueError, match="not allowed"):  # the allow-list applies first
        score("pick", ["a"], model="openai/gpt-4o")
    from core.llm import gateway

    monkeypatch.setattr(gateway.allowlist, "check_model", lambda m, field=None: m)
    with pytest.raises(ScoringUnsupported):
        score("pick", ["a"], model="openai/gpt-4o")
    with pytest.raises(ValueError, match="at least one"):
        score("pick", [], model=f"local/{MODEL}")


def test_backends_are_built_once_when_threads_ask_together(monkeypatch):
    """Claims checked in parallel ask for the backend at once; it must be built once (concurrent builds
    raced transformers' lazy imports: "cannot import name 'AutoTokenizer'")."""
    import time

    from core.llm.backends import factory, hf

    built = []

    class Slow:
        def __init__(self, name):
            time.sleep(0.2)
            built.append(name)

    monkeypatch.setattr(hf, "TransformersBackend", Slow)
    factory._build.cache_clear()
    try:
        out: list = []
        barrier = threading.Barrier(4)

        def ask():
            barrier.wait()
            out.append(factory.get_backend("transformers", "race-test"))

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert built == ["race-test"] and len(out) == 4 and all(o is out[0] for o in out)
    finally:
        factory._build.cache_clear()
