"""Behaviour cloning of the kept actions with LoRA (spec §3.4 step 4).

The loss is the negative log-likelihood of the policy's reply text (its Thought and
Action, followed by the end-of-turn token) given the exact chat messages it was
sampled with::

    L(θ) = − Σ_{(o, a) ∈ D}  Σ_t  log π_θ(a_t | o, a_<t)      (mean over target tokens per step)

minimised with Adam, batch 1, gradient accumulation, no clipping, through
:func:`core.train.fit` (a short last accumulation of an epoch still updates, scaled as if
full). Only LoRA adapters on every linear layer are trained, on a *copy* of the shared
local model (the gateway's instance is never mutated); the copy lives on the learner's
device (:func:`make_lora_model`), token ids are built on the CPU and moved there.
"""

from __future__ import annotations

import copy
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from core.device import resolve_device
from core.train import constant_lr, fit

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


def model_device(model: Any) -> torch.device:
    """Where ``model``'s parameters live (the CPU for a model without any)."""
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def example_nll(model: Any, tokenizer: Any, ex: BCExample, max_len: int = 1024) -> torch.Tensor:
    """Mean NLL per target token of one example (differentiable), on the model's device."""
    ids, labels = encode(tokenizer, ex, max_len)
    dev = model_device(model)
    out = model(input_ids=ids.to(dev), labels=labels.to(dev))
    return out.loss


@torch.no_grad()
def target_logprob(model: Any, tokenizer: Any, ex: BCExample, max_len: int = 1024) -> float:
    """Σ_t log π(a_t | o, a_<t) of the example's target tokens (computed on the model's device)."""
    ids, labels = encode(tokenizer, ex, max_len)
    dev = model_device(model)
    ids, labels = ids.to(dev), labels.to(dev)
    was_training = model.training
    model.eval()
    logits = model(input_ids=ids).logits[0, :-1].float()
    model.train(was_training)
    tgt = labels[0, 1:]
    mask = tgt != -100
    lp = torch.log_softmax(logits[mask], dim=-1).gather(1, tgt[mask].unsqueeze(1))
    return float(lp.sum())


def make_lora_model(base_model: Any, cfg: LoRAConfig, adapter_dir: str | None = None, *, device: Any = None) -> Any:
    """A trainable LoRA model on a deep copy of ``base_model`` (optionally loading saved adapters).

    ``device``: where the copy goes (default: where ``base_model`` is). The adapters are drawn on the
    CPU and moved with it, so a seed gives the same start on every device.
    """
    from peft import LoraConfig, PeftModel, get_peft_model

    model = copy.deepcopy(base_model)
    model.config.use_cache = False
    if adapter_dir is not None:
        peft_model = PeftModel.from_pretrained(model, adapter_dir, is_trainable=True)
        return peft_model if device is None else peft_model.to(resolve_device(device))
    # LoRA's A matrices start random: draw them from ``cfg.seed`` (on a forked generator, so the caller's
    # torch RNG is left as it was), or the same seed gives a different start in every process.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        peft_model = get_peft_model(
            model,
            LoraConfig(
                r=cfg.r,
                lora_alpha=cfg.alpha,
                lora_dropout=cfg.dropout,
                target_modules=cfg.target_modules,
                task_type="CAUSAL_LM",
            ),
        )
    return peft_model if device is None else peft_model.to(resolve_device(device))


def train_bc(
    model: Any,
    tokenizer: Any,
    examples: Sequence[BCExample],
    cfg: LoRAConfig,
    *,
    on_step: Callable[[int, int, float], None] | None = None,
    amp: str = "off",
) -> TrainStats:
    """Minimise the action NLL over ``examples`` (shuffled each epoch) with Adam and gradient accumulation.

    Runs on the model's device (``amp="bf16"``: bfloat16 autocast). ``on_step(examples done, total,
    last example's loss)`` is called after every optimizer step. On the CPU without AMP the updates are
    bit-identical to the per-example loop this function had before it used :func:`core.train.fit`.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters (wrap it with make_lora_model)")
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)  # LoRA dropout
    order: list[int] = []  # every epoch's shuffle, drawn in the old order
    sizes: list[int] = []  # examples per optimizer step: full accumulations, then the epoch's remainder
    n, ga = len(examples), cfg.grad_accum
    for _epoch in range(cfg.epochs):
        perm = list(range(n))
        rng.shuffle(perm)
        order += perm
        sizes += [ga] * (n // ga) + ([n % ga] if n % ga else [])
    ends = [sum(sizes[: k + 1]) for k in range(len(sizes))]
    total = len(order)
    stats = TrainStats()
    pending: list[torch.Tensor] = []  # per-example losses on the device, read back once per optimizer step

    def batch(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return encode(tokenizer, examples[order[i]], cfg.max_len)

    def loss_fn(m: Any, b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        loss = m(input_ids=b[0], labels=b[1]).loss
        pending.append(loss.detach())
        return loss

    def after_step(step: int) -> None:
        stats.losses.extend(torch.stack([v.float() for v in pending]).cpu().tolist())
        pending.clear()
        stats.examples = ends[step]
        stats.optimizer_steps = step + 1
        if on_step is not None:
            on_step(stats.examples, total, stats.losses[-1])

    t0 = time.perf_counter()
    if not sizes:  # nothing to clone (no examples or no epochs): the adapters stay as they are
        model.eval()
        return stats
    fit(
        model,
        batch,
        loss_fn,
        steps=len(sizes),
        lr=cfg.lr,
        clip=None,
        schedule=constant_lr,
        param_groups=[{"params": params}],
        optimizer=lambda groups: torch.optim.Adam(groups, lr=cfg.lr),
        accumulate=ga,
        micro_batches=lambda step: sizes[step],
        device=model_device(model),
        amp=amp,
        sync_every=max(1, math.ceil(100 / ga)),
        after_step=after_step,
        message="BC step",
    )
    stats.seconds = time.perf_counter() - t0
    log.info(
        "BC: %d examples, %d optimizer steps, mean loss %.4f, %.1fs",
        stats.examples,
        stats.optimizer_steps,
        stats.mean_loss,
        stats.seconds,
    )
    return stats
