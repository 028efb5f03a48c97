"""Stand-ins for the device tests (tests/test_devices.py): the jobs encode with a tiny random llama.

SmolLM2-135M on the lazy stand-in takes minutes per forward pass; :func:`tiny_local_model` saves the
2-layer llama of ``conftest.tiny_llama_dir`` (SmolLM2's tokenizer) under ``tmp_path`` and points the
jobs at it. Pools go to the session's Chroma store under that model's hash.
"""

from __future__ import annotations

from pathlib import Path

QUERY = "Tom has 3.0 apples and buys 2.0 more. How many apples does he have now?"


def save_tiny_llama(out: Path) -> Path:
    """A 2-layer, 4-head / 2-KV-head random Llama (hidden 64) with SmolLM2's tokenizer, saved in ``out``."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from core.llm.local_models import converted_dir

    tok = AutoTokenizer.from_pretrained(str(converted_dir()))
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.eos_token_id,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(cfg).eval().save_pretrained(out)
    tok.save_pretrained(out)
    return out


def tiny_local_model(monkeypatch, tmp_path) -> None:
    """``lms3.index``/``lms3.select`` use a tiny llama saved in ``tmp_path`` instead of SmolLM2."""
    from methods.lms3 import jobs

    monkeypatch.setattr(jobs, "MODEL_NAME", str(save_tiny_llama(tmp_path / "tiny-llama")))
