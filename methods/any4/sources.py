"""Base models the any4 jobs quantize: the clean from-scratch llama or a local registry model.

Each comes as a :class:`BaseModel`: a private fp32 copy (the shared instance of
``core.llm.get_local_model`` is never touched) and its text encoder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from methods.any4.data import Encode

CLEAN_MODEL = "clean-llama"


@dataclass
class BaseModel:
    """A model to quantize and how to turn text into its token ids."""

    name: str
    model: nn.Module
    encode: Encode
    flags: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def load_base(
    name: str, *, data_dir: Path, cache_dir: Path, progress=None, device: Any = None, amp: str = "off"
) -> BaseModel:
    """``clean-llama`` (trained once on ``device``, then cached) or a model of the local registry (own copy).

    The model comes back on the CPU in fp32; the caller moves it.
    """
    from core.llm.local_models import converted_dir, resolve_source

    if name == CLEAN_MODEL:
        from methods.any4.clean_model import CleanModelConfig, load_or_train

        cm = load_or_train(
            CleanModelConfig(),
            data_dir=data_dir,
            cache_dir=cache_dir,
            tokenizer_dir=converted_dir(),
            progress=progress,
            device=device,
            amp=amp,
        )
        return BaseModel(
            CLEAN_MODEL, cm.model, cm.encode, [], {"clean_dir": str(cm.path), "vocab_json": cm.vocab.to_json()}
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = resolve_source(name)
    path = converted_dir(name)
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    flags = ["weights pre-quantized (Q4_1 GGUF)"] if (src.gguf_file or "").upper().find("Q4") >= 0 else []
    return BaseModel(src.name, model, lambda text: tok(text)["input_ids"], flags, {"path": str(path)})
