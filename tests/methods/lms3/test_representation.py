"""Representation modes (spec §3.1): the compact reference computation equals the literal 128-token input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from methods.lms3.representation import Encoder

KEYS = [
    (m, layer)
    for m in ("reference", "last_token", "eos_appended")
    for layer in ("final_norm_output", "last_layer_attn_input")
]
TEXTS = [
    "Mary is baking a cake . The recipe wants 8.0 cups of flour .",
    "One pencil weighs 28.3 grams . How much do 5.0 pencils weigh ?",
    "x " * 300,
]  # longer than 128 tokens: truncated, index 127 is a real token


def _hf_states(lm, ids, mask=None):
    with torch.inference_mode():
        out = lm.model(
            input_ids=torch.tensor([ids]),
            attention_mask=None if mask is None else torch.tensor([mask]),
            output_hidden_states=True,
        )
        hs = out.hidden_states
        return hs[-1][0].numpy(), lm.model.base_model.layers[-1].input_layernorm(hs[-2])[0].numpy()


def test_all_modes_match_literal_hf_inputs(tiny_llama):
    tok = tiny_llama.tokenizer
    enc = Encoder(tiny_llama.model, tok, batch_size=2)
    got = enc.encode(TEXTS, KEYS)
    eos = tok.eos_token_id
    for j, text in enumerate(TEXTS):
        lit = tok(text, padding="max_length", truncation=True, max_length=128)
        ids, mask = lit["input_ids"], lit["attention_mask"]
        assert len(ids) == 128
        n = sum(mask)
        if n < 128:
            assert ids[-1] == eos and mask[-1] == 0
        final, attn_in = _hf_states(tiny_llama, ids, mask)
        np.testing.assert_allclose(got[("reference", "final_norm_output")][j], final[127], atol=2e-5, rtol=1e-4)
        np.testing.assert_allclose(got[("reference", "last_layer_attn_input")][j], attn_in[127], atol=2e-5, rtol=1e-4)
        real = ids[:n]
        final, attn_in = _hf_states(tiny_llama, real)
        np.testing.assert_allclose(got[("last_token", "final_norm_output")][j], final[-1], atol=2e-5, rtol=1e-4)
        final, attn_in = _hf_states(tiny_llama, real + [eos])
        np.testing.assert_allclose(got[("eos_appended", "final_norm_output")][j], final[-1], atol=2e-5, rtol=1e-4)
        np.testing.assert_allclose(got[("eos_appended", "last_layer_attn_input")][j], attn_in[-1], atol=2e-5, rtol=1e-4)
    # the reference summary token differs from appending EOS at position n (position id 127, own key masked)
    assert not np.allclose(got[("reference", "final_norm_output")][0], got[("eos_appended", "final_norm_output")][0])


def test_compact_equals_exact_padding_and_is_cheaper(tiny_llama):
    a = Encoder(tiny_llama.model, tiny_llama.tokenizer, batch_size=3)
    b = Encoder(tiny_llama.model, tiny_llama.tokenizer, batch_size=3, exact_padding=True)
    key = [("reference", "final_norm_output")]
    np.testing.assert_allclose(a.encode(TEXTS[:2], key)[key[0]], b.encode(TEXTS[:2], key)[key[0]], atol=2e-5)
    assert a.tokens_processed < b.tokens_processed / 3


def test_real_model_reference_mode(data_dir):
    """SmolLM2: 128 tokens with EOS last, 576-dim finite output equal to the literal padded forward."""
    from core.llm import get_local_model
    from methods.lms3.data import load_split

    lm = get_local_model()
    q = load_split("mawps", "queries")[0].text
    enc = Encoder(lm.model, lm.tokenizer)
    ids = enc.token_ids(q)
    assert len(ids) < 127
    x = enc.encode([q])[("reference", "final_norm_output")]
    assert x.shape == (1, 576) and x.dtype == np.float32 and np.isfinite(x).all()
    lit = lm.tokenizer(q, padding="max_length", truncation=True, max_length=128, return_tensors="pt")
    assert lit.input_ids.shape == (1, 128) and int(lit.input_ids[0, -1]) == lm.tokenizer.eos_token_id
    with torch.inference_mode():
        ref = lm.model(**lit, output_hidden_states=True).hidden_states[-1][0, -1].numpy()
    np.testing.assert_allclose(x[0], ref, atol=2e-4, rtol=1e-4)


def test_empty_problem_rejected(tiny_llama):
    with pytest.raises(ValueError):
        Encoder(tiny_llama.model, tiny_llama.tokenizer).encode(["  "])
