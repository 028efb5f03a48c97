"""Stand-ins for the device tests (tests/test_devices.py): SEFE, lsa.smollm2 and PAE's learner on a tiny llama.

SmolLM2-135M on the lazy stand-in takes minutes per forward pass (measured: 5-7 min for one 12-token
forward of the 30-layer model; 5 s for two layers); :func:`save_tiny_llama` writes a 2-layer random
Llama with SmolLM2's tokenizer (its chat template and special tokens) and the setups point the jobs at it.
"""

from __future__ import annotations

from pathlib import Path


def save_tiny_llama(out: Path) -> Path:
    """A 2-layer, 4-head / 2-KV-head random Llama (hidden 32) with SmolLM2's tokenizer, saved in ``out``."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from core.llm.local_models import converted_dir

    tok = AutoTokenizer.from_pretrained(str(converted_dir()))
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
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
    """Every ``get_local_model()`` of the run returns a tiny llama saved in ``tmp_path`` (whatever name is asked).

    Covers SEFE (``experiment.load_base``), ``lsa.smollm2`` and PAE's learner (``update_policy``).
    """
    import core.llm
    from core.llm import local_models

    path = str(save_tiny_llama(tmp_path / "tiny-llama"))
    real = local_models.get_local_model

    def tiny(name=None, **kwargs):
        return real(path, **kwargs)

    monkeypatch.setattr(local_models, "get_local_model", tiny)
    monkeypatch.setattr(core.llm, "get_local_model", tiny)
