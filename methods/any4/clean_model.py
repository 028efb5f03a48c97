"""A small llama-style model trained from scratch in fp32 on GSM8K + MATH text (spec §6.1, mitigation 3).

SmolLM2's weights come from a Q4_1 GGUF, so they already sit on a 16-level grid per
32-block and say little about 4-bit formats. This model's weights never saw a
quantizer: llama architecture, 4 layers, d = 256, 4 heads, SmolLM2 tokenizer,
sequence 256, trained on the train splits of GSM8K and MATH.

CPU-scale shrink (stated in the results): 300 AdamW steps of 4×256 tokens (the
spec suggests 2–5k), and the output/embedding table restricted to the ``vocab_size − 1`` most
frequent SmolLM2 token ids of the training text plus one shared "rare" id (0), so a
step costs a fraction of the full 49,152-row softmax. Perplexities of this model are
over that compact vocabulary.

The trained model is saved under ``<cache_dir>/any4/clean-llama-<key>/`` and reused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from core.train import fit
from methods.any4.data import math_eval_text, math_train_text, text_windows
from methods.any4.evaluate import perplexity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CleanModelConfig:
    """Architecture and training budget of the clean model."""

    vocab_size: int = 8192
    hidden_size: int = 256
    intermediate_size: int = 768
    num_layers: int = 4
    num_heads: int = 4
    seq_len: int = 256
    batch_size: int = 4
    steps: int = 300
    lr: float = 3e-3
    warmup: int = 30
    weight_decay: float = 0.1
    train_chars: int = 2_000_000
    seed: int = 0

    def key(self) -> str:
        blob = json.dumps(dataclasses.asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:10]


class VocabMap:
    """SmolLM2 token id → compact id (0 = any token outside the kept set)."""

    def __init__(self, kept: list[int], full_size: int) -> None:
        self.kept = list(kept)
        self.full_size = full_size
        self.lookup = torch.zeros(full_size, dtype=torch.long)
        self.lookup[torch.tensor(self.kept, dtype=torch.long)] = torch.arange(1, len(self.kept) + 1)

    @classmethod
    def from_ids(cls, ids: list[int], size: int, full_size: int) -> VocabMap:
        common = [t for t, _ in Counter(ids).most_common(size - 1)]
        return cls(sorted(common), full_size)

    def __call__(self, ids: list[int] | torch.Tensor) -> list[int]:
        return self.lookup[torch.as_tensor(ids, dtype=torch.long)].tolist()

    def to_json(self) -> str:
        return json.dumps({"kept": self.kept, "full_size": self.full_size})

    @classmethod
    def from_json(cls, text: str) -> VocabMap:
        d = json.loads(text)
        return cls(d["kept"], d["full_size"])


@dataclass
class CleanModel:
    """The trained model, its tokenizer, the compact-vocabulary map and the training log."""

    model: nn.Module
    tokenizer: object
    vocab: VocabMap
    path: Path
    log: dict
    trained_now: bool = False

    def encode(self, text: str) -> list[int]:
        return self.vocab(self.tokenizer(text)["input_ids"])


def build_model(cfg: CleanModelConfig) -> nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(cfg.seed)
    conf = LlamaConfig(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_heads,
        max_position_embeddings=cfg.seq_len,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )
    return LlamaForCausalLM(conf)


def train(
    cfg: CleanModelConfig,
    model: nn.Module,
    tokens: torch.Tensor,
    *,
    progress=None,
    device: Any = None,
    amp: str = "off",
) -> list[float]:
    """AdamW (betas 0.9/0.95, lr warm-up then cosine decay to 10%, grad norm clipped to 1) on random ``seq_len``
    windows of the token stream; returns the loss of every step.

    ``device`` (``None``: where the model is) and ``amp`` go to :func:`core.train.fit`; the windows are cut
    on the CPU from the CPU generator and moved as they come.
    """
    gen = torch.Generator().manual_seed(cfg.seed)

    def batch(_step: int) -> torch.Tensor:
        starts = torch.randint(0, tokens.numel() - cfg.seq_len - 1, (cfg.batch_size,), generator=gen)
        return torch.stack([tokens[s : s + cfg.seq_len] for s in starts.tolist()])

    return fit(
        model,
        batch,
        lambda m, b: m(input_ids=b, labels=b).loss,
        steps=cfg.steps,
        lr=cfg.lr,
        warmup=cfg.warmup,
        weight_decay=cfg.weight_decay,
        clip=1.0,
        betas=(0.9, 0.95),
        min_lr_ratio=0.1,
        device=device,
        amp=amp,
        progress=progress,
        message="clean model step",
    )


def load_or_train(
    cfg: CleanModelConfig,
    *,
    data_dir: Path,
    cache_dir: Path,
    tokenizer_dir: Path,
    progress=None,
    device: Any = None,
    amp: str = "off",
) -> CleanModel:
    """The clean model for ``cfg`` (on the CPU): loaded from the cache, or trained once on ``device`` and saved.

    The cache key does not cover the device: a model trained on a GPU serves CPU runs and vice versa.
    """
    import safetensors.torch
    from transformers import AutoTokenizer

    out = Path(cache_dir) / "any4" / f"clean-llama-{cfg.key()}"
    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    model = build_model(cfg)
    if (out / ".complete").exists():
        safetensors.torch.load_model(model, str(out / "model.safetensors"))
        model.eval()
        vocab = VocabMap.from_json((out / "vocab.json").read_text())
        return CleanModel(model, tok, vocab, out, json.loads((out / "train_log.json").read_text()))
    t0 = time.perf_counter()
    text = math_train_text(data_dir, seed=cfg.seed, max_chars=cfg.train_chars)
    full_ids = tok(text)["input_ids"]
    vocab = VocabMap.from_ids(full_ids, cfg.vocab_size, len(tok))
    tokens = torch.tensor(vocab(full_ids), dtype=torch.long)
    log.info(
        "clean model: %d training tokens, %.1f%% outside the compact vocabulary",
        tokens.numel(),
        100 * float((tokens == 0).float().mean()),
    )
    losses = train(cfg, model, tokens, progress=progress, device=device, amp=amp)
    cm = CleanModel(model, tok, vocab, out, {}, trained_now=True)
    val = text_windows(cm.encode, math_eval_text(data_dir), cfg.seq_len, 16)
    cm.log = {
        "config": dataclasses.asdict(cfg),
        "train_tokens": tokens.numel(),
        "rare_fraction": float((tokens == 0).float().mean()),
        "losses": losses,
        "final_loss_avg20": sum(losses[-20:]) / len(losses[-20:]),
        "val_ppl_math_16x256": perplexity(model, val),
        "train_seconds": time.perf_counter() - t0,
        "n_params": sum(p.numel() for p in model.parameters()),
    }
    model.cpu()  # saved from, and returned on, the CPU (a no-op when it trained there)
    out.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(out)
    safetensors.torch.save_model(model, str(out / "model.safetensors"))
    (out / "vocab.json").write_text(vocab.to_json())
    (out / "train_log.json").write_text(json.dumps(cm.log))
    (out / ".complete").write_text("ok")
    log.info("clean model trained in %.0fs, val ppl %.2f", cm.log["train_seconds"], cm.log["val_ppl_math_16x256"])
    return cm
