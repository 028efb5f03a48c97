"""Repetition control in the local provider: repeat penalty and n-gram block (unit, then SmolLM2 end to end)."""

from __future__ import annotations

import numpy as np
import pytest

from core.llm.backends.base import GenerationRequest
from core.llm.backends.chat import eos_ids
from core.llm.backends.decoding import Sequence


def _req(**kw) -> GenerationRequest:
    return GenerationRequest(messages=[{"role": "user", "content": "x"}], **kw)


def test_repeat_penalty_follows_llama_cpp_rule(tokenizer):
    seq = Sequence(_req(repeat_penalty=2.0, repeat_last_n=2), [1], tokenizer, eos_ids(tokenizer))
    for t in (10, 11, 12):
        seq.push(t)
    logits = np.zeros(len(tokenizer), dtype=np.float32)
    logits[10], logits[11], logits[12], logits[13] = 5.0, 4.0, -1.0, 3.0
    scores = logits.copy()
    seq._penalise_repeats(scores)
    assert scores[10] == 5.0, "outside the last-n window: untouched"
    assert scores[11] == 2.0 and scores[12] == -2.0, "positive divided, negative multiplied"
    assert seq.choose(logits) == 10
    off = Sequence(_req(), [1], tokenizer, eos_ids(tokenizer))
    off.push(10)
    same = logits.copy()
    off._penalise_repeats(same)
    assert np.array_equal(same, logits), "off by default"


def test_no_repeat_ngram_blocks_the_completion_of_a_seen_ngram(tokenizer):
    seq = Sequence(_req(no_repeat_ngram=3), [1], tokenizer, eos_ids(tokenizer))
    for t in (5, 6, 7, 5, 6):  # "5 6 7" seen; now after "5 6" the token 7 would repeat it
        seq.push(t)
    logits = np.zeros(len(tokenizer), dtype=np.float32)
    logits[7], logits[8] = 9.0, 1.0
    assert seq.choose(logits) == 8


def test_provider_validates_and_passes_the_options():
    from core.llm.providers import _request_from

    req = _request_from([{"role": "user", "content": "x"}], {"repeat_penalty": 1.3, "no_repeat_ngram": 4})
    assert req.repeat_penalty == 1.3 and req.no_repeat_ngram == 4 and req.repeat_last_n == 64
    req = _request_from([{"role": "user", "content": "x"}], {"extra_body": {"repeat_penalty": 1.1}})
    assert req.repeat_penalty == 1.1
    with pytest.raises(ValueError, match="repeat_penalty"):
        _request_from([{"role": "user", "content": "x"}], {"repeat_penalty": 9})


def test_smollm2_loop_is_broken_by_the_ngram_block(fast_backend):
    """A prompt that makes the 135M model loop: with the block, no 6-gram occurs twice."""
    msgs = [{"role": "user", "content": "List the numbers: 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3,"}]

    def ngrams(ids: list[int], n: int = 6) -> list[tuple[int, ...]]:
        return [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]

    plain = fast_backend.generate(GenerationRequest(messages=msgs, max_tokens=60))
    grams = ngrams(plain.token_ids)
    assert len(set(grams)) < len(grams), f"the prompt no longer makes the model repeat: {plain.text!r}"
    blocked = fast_backend.generate(GenerationRequest(messages=msgs, max_tokens=60, no_repeat_ngram=6))
    grams = ngrams(blocked.token_ids)
    assert len(set(grams)) == len(grams), blocked.text
