"""Behaviour cloning of the kept actions with LoRA (spec §3.4 step 4).

The loss is the negative log-likelihood of the policy's reply text (its Thought and
Action, followed by the end-of-turn token) given the exact chat messages it was
sampled with::

    L(θ) = − Σ_{(o, a) ∈ D}  Σ_t  log π_θ(a_t | o, a_<t)      (mean over target tokens per step)

minimised with Adam, batch 1, gradient accumulation, no clipping. Only LoRA adapters
on every linear layer are trained, on a *copy* of the shared local model (the
gateway's instance is never mutated).
"""

from __future__ import annotations

import copy
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BCExample:
    """One (observation, action) pair: the policy's chat messages and the reply it produced."""

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    target: str

    @classmethod
    def from_messages(cls, messages: Sequence[dict[str, str]], target: str) -> BCExample:
        return cls(tuple((m["role"], m["content"]) for m in messages), target)


@dataclass
class LoRAConfig:
    """LoRA + optimiser settings. Paper: r = α = 256, dropout 0.05, lr 2e-5, grad-accum 32, Adam."""

    r: int = 16
    alpha: int = 16
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"
    lr: float = 2e-5
    grad_accum: int = 32
    epochs: int = 1
    max_len: int = 1024
    seed: int = 0


@dataclass
class TrainStats:
    examples: int = 0
    optimizer_steps: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)

    @property
    def mean_loss(self) -> float:
        return sum(self.losses) / len(self.losses) if self.losses else float("nan")


def encode(tokenizer: Any, ex: BCExample, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and labels (−100 on the prompt) for one example; long prompts lose their beginning."""
    msgs = [{"role": r, "content": c} for r, c in ex.messages]
    prompt = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    eos = tokenizer.eos_token or ""
    t_ids = tokenizer(ex.target.strip() + eos, add_special_tokens=False)["input_ids"]
    t_ids = t_ids[: max_len // 2]
    p_ids = p_ids[-(max_len - len(t_ids)) :]
    ids = torch.tensor([p_ids + t_ids], dtype=torch.long)
    labels = torch.tensor([[-100] * len(p_ids) + t_ids], dtype=torch.long)
    return ids, labels


def example_nll(model: Any, tokenizer: Any, ex: BCExample, max_len: int = 1024) -> torch.Tensor:
    """Mean NLL per target token of one example (differentiable)."""
    ids, labels = encode(tokenizer, ex, max_len)
    out = model(input_ids=ids, labels=labels)
    return out.loss


@torch.no_grad()
def target_logprob(model: Any, tokenizer: Any, ex: BCExample, max_len: int = 1024) -> float:
    """Σ_t log π(a_t | o, a_<t) of the example's target tokens."""
    ids, labels = encode(tokenizer, ex, max_len)
    was_training = model.training
    model.eval()
    logits = model(input_ids=ids).logits[0, :-1].float()
    model.train(was_training)
    tgt = labels[0, 1:]
    mask = tgt != -100
    lp = torch.log_softmax(logits[mask], dim=-1).gather(1, tgt[mask].unsqueeze(1))
    return float(lp.sum())


def make_lora_model(base_model: Any, cfg: LoRAConfig, adapter_dir: str | None = None) -> Any:
    """A trainable LoRA model on a deep copy of ``base_model`` (optionally loading saved adapters)."""
    from peft import LoraConfig, PeftModel, get_peft_model

    model = copy.deepcopy(base_model)
    model.config.use_cache = False
    if adapter_dir is not None:
        return PeftModel.from_pretrained(model, adapter_dir, is_trainable=True)
    # LoRA's A matrices start random: draw them from ``cfg.seed`` (on a forked generator, so the caller's
    # torch RNG is left as it was), or the same seed gives a different start in every process.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        return get_peft_model(
            model,
            LoraConfig(
                r=cfg.r,
                lora_alpha=cfg.alpha,
                lora_dropout=cfg.dropout,
                target_modules=cfg.target_modules,
                task_type="CAUSAL_LM",
            ),
        )


def train_bc(
    model: Any,
    tokenizer: Any,
    examples: Sequence[BCExample],
    cfg: LoRAConfig,
    *,
    on_step: Callable[[int, int, float], None] | None = None,
) -> TrainStats:
    """Minimise the action NLL over ``examples`` (shuffled each epoch) with Adam and gradient accumulation."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters (wrap it with make_lora_model)")
    opt = torch.optim.Adam(params, lr=cfg.lr)
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    stats = TrainStats()
    t0 = time.perf_counter()
    model.train()
    total = len(examples) * cfg.epochs
    for _epoch in range(cfg.epochs):
        order = list(range(len(examples)))
        rng.shuffle(order)
        pending = 0
        for i in order:
            loss = example_nll(model, tokenizer, examples[i], cfg.max_len)
            (loss / cfg.grad_accum).backward()
            stats.losses.append(float(loss.detach()))
            stats.examples += 1
            pending += 1
            if pending == cfg.grad_accum:
                opt.step()
                opt.zero_grad(set_to_none=True)
                stats.optimizer_steps += 1
                pending = 0
            if on_step is not None:
                on_step(stats.examples, total, stats.losses[-1])
        if pending:  # the last partial accumulation still updates (scaled as if full)
            opt.step()
            opt.zero_grad(set_to_none=True)
            stats.optimizer_steps += 1
    model.eval()
    stats.seconds = time.perf_counter() - t0
    log.info(
        "BC: %d examples, %d optimizer steps, mean loss %.4f, %.1fs",
        stats.examples,
        stats.optimizer_steps,
        stats.mean_loss,
        stats.seconds,
    )
    return stats
