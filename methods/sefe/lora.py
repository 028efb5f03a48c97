"""LoRA on the local causal LM: attach a fresh adapter, train one task (CE + λ·L_reg), merge, generate.

Spec §3.1/§6: a **fresh** PEFT LoRA (A Kaiming, B = 0) on q,k,v,o,gate,up,down of every layer,
dropout 0.05, α = 2r; AdamW lr 2e-4, cosine schedule with 3 % warm-up, weight decay 0; after the
task the adapter is merged into the base weights (``merge_and_unload``), so the next task starts
from the merged model. The loss is the token cross-entropy of the answer tokens (the prompt is
masked, as LLaVA does) plus ``λ · L_reg`` on every step when a key memory is given.

Training runs where the model is (``core.train.fit`` moves each batch there; ``amp="bf16"`` runs the
forward under bfloat16 autocast). Adapter pairs (what caches store) are CPU copies, applied to
weights on any device.
"""

from __future__ import annotations

import logging
import math
import random
from typing import Any

import torch

from core.jobs import JobContext, null_context
from core.train import fit
from methods.sefe.config import TrainSettings
from methods.sefe.reglora import KeyMemory, lora_pairs, penalty
from methods.sefe.tasks import Example

log = logging.getLogger(__name__)

TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def chat_prompt(prompt: str) -> str:
    """The ChatML turn SmolLM2-Instruct was tuned on, without its default system prompt (saves tokens)."""
    return f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


END = "<|im_end|>"


def attach_lora(model: Any, s: TrainSettings) -> Any:
    """Wrap ``model`` (in place) with a fresh LoRA adapter on every q,k,v,o,gate,up,down projection."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(
        r=s.rank,
        lora_alpha=s.alpha,
        lora_dropout=s.dropout,
        target_modules=list(TARGET_MODULES),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, cfg)


def encode(examples: list[Example], tokenizer: Any, max_length: int) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` per example; labels are -100 on the prompt (loss on answer + end token)."""
    out = []
    for ex in examples:
        p = tokenizer(chat_prompt(ex.prompt), add_special_tokens=False)["input_ids"]
        a = tokenizer(ex.answer + END, add_special_tokens=False)["input_ids"]
        ids = (p + a)[:max_length]
        labels = ([-100] * len(p) + a)[:max_length]
        out.append((ids, labels))
    return out


def collate(batch: list[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    n = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), n), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), n), dtype=torch.long)
    for k, (i, lab) in enumerate(batch):
        ids[k, : len(i)] = torch.tensor(i)
        labels[k, : len(lab)] = torch.tensor(lab)
        mask[k, : len(i)] = 1
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def train_task(
    model: Any,
    tokenizer: Any,
    examples: list[Example],
    s: TrainSettings,
    *,
    seed: int,
    features: Any = None,
    memory: KeyMemory | None = None,
    lam: float = 0.0,
    progress: JobContext | None = None,
    amp: str = "off",
) -> tuple[Any, dict[str, float]]:
    """Attach a fresh LoRA to ``model``, train ``s.epochs`` over ``examples``, return ``(peft model, stats)``.

    The caller merges (:func:`merge`) after reading the adapter (key positions). With ``memory``
    holding positions and ``lam > 0`` the loss is ``CE + lam · L_reg`` on every step.
    ``features(input_ids, attention_mask)`` gives the input of ``model``'s first layer when
    ``model`` is the adapted upper part of a split model (:mod:`methods.sefe.split`).
    Training runs on ``model``'s device (the fresh LoRA is drawn on the CPU and moved there by PEFT).
    """
    progress = progress or null_context()
    torch.manual_seed(seed)
    peft_model = attach_lora(model, s)
    data = encode(examples, tokenizer, s.max_length)
    rng = random.Random(seed)
    order: list[int] = []
    for _ in range(s.epochs):
        perm = list(range(len(data)))
        rng.shuffle(perm)
        order += perm
    steps = max(1, math.ceil(len(order) / s.batch_size))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    use_reg = memory is not None and lam > 0 and len(memory) > 0
    stats = {"ce": 0.0, "reg": 0.0, "reg_first": math.nan, "reg_last": math.nan}
    ces: list[torch.Tensor] = []  # per-step values, kept on the device and read back once at the end
    regs: list[torch.Tensor] = []

    def batches(step: int) -> dict[str, torch.Tensor]:
        batch = collate([data[i] for i in order[step * s.batch_size : (step + 1) * s.batch_size]], pad)
        if features is not None:  # the frozen lower layers' output for these token sequences (cached)
            batch["inputs_embeds"] = features(batch["input_ids"], batch["attention_mask"])
            del batch["input_ids"]
        return batch

    def loss_fn(m: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        ce = answer_ce(m.get_base_model(), batch)
        ces.append(ce.detach())
        if not use_reg:
            return ce
        reg = penalty(m, memory)
        regs.append(reg.detach())
        return ce + lam * reg

    losses = fit(
        peft_model,
        batches,
        loss_fn,
        steps=steps,
        lr=s.lr,
        warmup=max(1, math.ceil(s.warmup_ratio * steps)),
        weight_decay=s.weight_decay,
        clip=1.0,
        progress=progress,
        message="LoRA step",
        log_every=max(1, steps // 8),
        device=_device_of(peft_model),
        amp=amp,
    )
    for r in _floats(regs):  # the running means, summed in step order as before
        stats["reg"] += r / steps
        stats["reg_first"] = r if math.isnan(stats["reg_first"]) else stats["reg_first"]
        stats["reg_last"] = r
    for c in _floats(ces):
        stats["ce"] += c / steps
    stats["loss_last"] = losses[-1]
    stats["steps"] = steps
    return peft_model, stats


def _floats(values: list[torch.Tensor]) -> list[float]:
    """0-dim tensors as Python floats, read back in one transfer."""
    return torch.stack([v.float() for v in values]).cpu().tolist() if values else []


def _device_of(model: Any) -> torch.device:
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def answer_ce(causal_lm: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Token cross-entropy over the answer positions (labels ≠ -100), the same value as the model's
    own ``loss`` but with the vocabulary projection applied to those positions only (≈5× cheaper).

    The batch holds ``inputs_embeds`` (the frozen lower layers' output, see :mod:`methods.sefe.split`)
    or ``input_ids``."""
    inputs = {k: batch[k] for k in ("input_ids", "inputs_embeds") if k in batch}
    hs = causal_lm.model(**inputs, attention_mask=batch["attention_mask"]).last_hidden_state
    labels = batch["labels"][:, 1:]
    sel = labels != -100
    logits = causal_lm.lm_head(hs[:, :-1][sel])
    return torch.nn.functional.cross_entropy(logits.float(), labels[sel])


def adapter_pairs(peft_model: Any) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """Detached CPU copies of ``(module name, B, A)`` of every adapted layer (what a cache stores)."""
    return [(n, B.detach().cpu().clone(), A.detach().cpu().clone()) for n, B, A in lora_pairs(peft_model)]


@torch.no_grad()
def apply_adapter(model: Any, pairs: list[tuple[str, torch.Tensor, torch.Tensor]], scale: float) -> Any:
    """``W_ℓ ← W_ℓ + scale · B_ℓ A_ℓ`` for every pair (PEFT's merge formula, ``scale = α/r``)."""
    for name, B, A in pairs:
        w = model.get_submodule(name).weight
        w += (scale * (B.to(w.device).float() @ A.to(w.device).float())).to(w.dtype)
    return model


def merge(peft_model: Any, s: TrainSettings) -> tuple[Any, list[tuple[str, torch.Tensor, torch.Tensor]]]:
    """Fold the adapter into the base weights (``W + (α/r)·B A``); returns ``(plain model, pairs)``.

    The adapter is unloaded and merged with :func:`apply_adapter`, so a run resumed from cached
    pairs produces bit-identical weights.
    """
    pairs = adapter_pairs(peft_model)
    model = peft_model.unload()
    return apply_adapter(model, pairs, s.alpha / s.rank), pairs
