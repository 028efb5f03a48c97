"""The gold-NLL scorer counts gold tokens only (checked against a manual token-by-token loop)."""

from __future__ import annotations

import numpy as np
import torch

from methods.lms3.nll import gold_nll


def _manual(lm, prompt: str, gold: str) -> tuple[float, int]:
    tok, model = lm.tokenizer, lm.model
    p = tok(prompt)["input_ids"]
    g = tok(gold, add_special_tokens=False)["input_ids"]
    total = 0.0
    with torch.inference_mode():
        for t, token in enumerate(g):
            logits = model(input_ids=torch.tensor([p + g[:t]])).logits[0, -1]
            total -= float(torch.log_softmax(logits, -1)[token])
    return total / len(g), len(g)


def test_gold_nll_matches_manual_loop(tiny_llama):
    prompts = [
        "Let's think step by step: 2 + 3 = ?\nA: ",
        "Q: a much longer prompt with several words in it\nA: ",
        "Here are some examples.\n\nQ: 1+1\nA: 2\n\nQ: 4+4\nA: ",
    ]
    golds = ["5.0", "The answer is #### 12", "8"]
    got = gold_nll(tiny_llama.model, tiny_llama.tokenizer, prompts, golds, batch_size=2)
    for (p, g), r in zip(zip(prompts, golds), got):
        mean, n = _manual(tiny_llama, p, g)
        assert r.tokens == n
        np.testing.assert_allclose(r.mean, mean, rtol=1e-4)
        np.testing.assert_allclose(r.total, mean * n, rtol=1e-4)


def test_prompt_tokens_are_not_counted(tiny_llama):
    """Changing the prompt changes the NLL but never the gold-token count; padding in a batch changes nothing."""
    tok = tiny_llama.tokenizer
    gold = "The answer is 42.0"
    a = gold_nll(tiny_llama.model, tok, ["short\nA: "], [gold])[0]
    b = gold_nll(tiny_llama.model, tok, ["a far longer prompt " * 20 + "\nA: "], [gold])[0]
    assert a.tokens == b.tokens == len(tok(gold, add_special_tokens=False)["input_ids"])
    assert a.mean != b.mean
    both = gold_nll(
        tiny_llama.model, tok, ["short\nA: ", "a far longer prompt " * 20 + "\nA: "], [gold, gold], batch_size=2
    )
    np.testing.assert_allclose([both[0].mean, both[1].mean], [a.mean, b.mean], rtol=1e-5)
