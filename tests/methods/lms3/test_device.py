"""The representations and the gold NLL on another device (the lazy stand-in) equal the CPU's."""

from __future__ import annotations

import copy

import numpy as np

from methods.lms3.nll import gold_nll
from methods.lms3.representation import Encoder
from tests.devices import lazy_safe_views, stand_in_device

TEXTS = ["Tom has 3.0 apples and buys 2.0 more.", "A train covers 120.0 km in 2.0 hours. What is its speed?"]
KEYS = [("reference", "final_norm_output"), ("eos_appended", "last_layer_attn_input")]


def test_encoder_and_gold_nll_run_on_the_model_device(tiny_llama):
    model, tok = tiny_llama.model, tiny_llama.tokenizer
    on_dev = copy.deepcopy(model).to(stand_in_device())
    with lazy_safe_views():
        got = Encoder(on_dev, tok, batch_size=2).encode(TEXTS, KEYS)
        nll = gold_nll(on_dev, tok, ["Q: 2 + 2?\nA: "], ["The answer is 4."])
    want = Encoder(model, tok, batch_size=2).encode(TEXTS, KEYS)
    for k in KEYS:
        assert got[k].dtype == np.float32 and np.allclose(got[k], want[k], atol=1e-5), k
    ref = gold_nll(model, tok, ["Q: 2 + 2?\nA: "], ["The answer is 4."])
    assert nll[0].tokens == ref[0].tokens and abs(nll[0].mean - ref[0].mean) < 1e-4
