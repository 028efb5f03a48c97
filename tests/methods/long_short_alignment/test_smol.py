"""The SmolLM2 misalignment smoke test's machinery, on a tiny random Llama with SmolLM2's tokenizer."""

from __future__ import annotations

import math

import pytest

from core.jobs import JobContext


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory):
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from core.llm.local_models import converted_dir

    tok = AutoTokenizer.from_pretrained(str(converted_dir()))
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        tie_word_embeddings=True,
    )
    out = tmp_path_factory.mktemp("tiny-llama-lsa")
    LlamaForCausalLM(cfg).eval().save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


def test_misalignment_of_a_pretrained_style_model(tiny_llama_dir, data_dir):
    from methods.long_short_alignment.smol import smollm2_misalignment

    res = smollm2_misalignment(data_dir, l_train=32, n_samples=6, batch=3, model_name=tiny_llama_dir)
    s = res["summary"]
    assert res["n_samples"] == 6 and len(res["samples"]["skl"]) == 6
    assert s["skl_same"]["mean"] == pytest.approx(0.0, abs=1e-6)  # same input twice: identical distributions
    assert res["max_sce_identity_gap"] < 1e-3  # SCE = H(p) + H(q) + SKL on every pair
    assert s["skl"]["mean"] > 0 and math.isfinite(s["sce"]["mean"])
    assert s["sce"]["mean"] >= s["h_long"]["mean"] + s["h_short"]["mean"] - 1e-4


def test_smollm2_job_params_are_bounded():
    from methods.long_short_alignment.jobs import SmolParams

    with pytest.raises(ValueError):
        SmolParams(n_samples=1000)
    with pytest.raises(ValueError):
        SmolParams(l_train=8)


def test_smollm2_job_report(tiny_llama_dir, monkeypatch):
    from methods.long_short_alignment import smol
    from methods.long_short_alignment.jobs import SmolParams, smollm2

    real = smol.smollm2_misalignment
    monkeypatch.setattr(smol, "smollm2_misalignment", lambda *a, **k: real(*a, **k, model_name=tiny_llama_dir))
    r = smollm2(SmolParams(l_train=32, n_samples=4), JobContext())
    assert r.metrics["skl_same"] == pytest.approx(0.0, abs=1e-6) and r.metrics["skl"] > 0
    assert r.tables and "SmolLM2" in r.tables[0].title
