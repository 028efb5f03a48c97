"""Synthetic length-generalization tasks of spec §3.1 / §6.1: mean, length, OutRep-length.

Tokens are Bernoulli(½) bits (ids 0/1), BOS = 2, PAD = 3. Sequences are right-padded and the scalar is
read at the last real position (index l), so causal attention never sees the padding.

Batches are drawn on the CPU from a seeded generator (the same data on every device) and moved to the
model's device; training and evaluation run there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch

from core.device import autocast, resolve_device
from core.train import fit, pin_threads, seed_everything
from methods.long_short_alignment.model import CausalTransformer

Task = Literal["mean", "length", "outrep"]
BOS, PAD = 2, 3
EVAL_LENGTHS = (1, 5, 10, 15, 20, 30, 40, 50)


@dataclass(frozen=True)
class SynthConfig:
    task: Task = "mean"
    pe: Literal["nope", "rope", "sinusoidal", "learned"] = "nope"
    steps: int = 3000
    batch: int = 128
    lr: float = 1e-3
    l_max_train: int = 10
    seed: int = 0
    d: int = 64
    heads: int = 4
    layers: int = 2
    ffn: int = 128
    eval_per_length: int = 2000


def target(task: Task, bits: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Training target in model units (OutRep trains on 1/√l)."""
    lf = lengths.float()
    if task == "mean":
        return bits.float().sum(1) / lf
    if task == "length":
        return lf
    return lf.rsqrt()


def decode(task: Task, y: torch.Tensor) -> torch.Tensor:
    """Model output back to the original target units (OutRep: ŷ⁻² with ŷ clamped to [1/√100, 1])."""
    if task == "outrep":
        return y.clamp(0.1, 1.0).pow(-2)
    return y


def make_batch(n: int, lengths: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """[n, 1 + max(l)] tokens (BOS, bits, PAD) and the bit matrix with zeros past each length."""
    t = int(lengths.max())
    bits = torch.randint(0, 2, (n, t), generator=gen, device=gen.device)
    mask = torch.arange(t, device=bits.device)[None, :] < lengths.to(bits.device)[:, None]
    bits = bits * mask
    tokens = torch.where(mask, bits, torch.full_like(bits, PAD))
    return torch.cat([torch.full((n, 1), BOS, device=bits.device), tokens], 1), bits


def predict(model: CausalTransformer, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    out = model(tokens)[..., 0]
    return out.gather(1, lengths[:, None]).squeeze(1)


def build_model(cfg: SynthConfig) -> CausalTransformer:
    return CausalTransformer(
        4, d=cfg.d, heads=cfg.heads, layers=cfg.layers, ffn=cfg.ffn, pe=cfg.pe, max_positions=cfg.l_max_train + 1
    )


def train(
    cfg: SynthConfig, progress=None, *, device: Any = None, amp: str = "off"
) -> tuple[CausalTransformer, list[float]]:
    """Train the model of ``cfg`` with Adam at a constant rate; returns it (on ``device``) and its step losses.

    The model is initialised on the CPU (the same start everywhere) and trained on ``device``
    (default: the CPU); ``amp="bf16"`` trains under bfloat16 autocast.
    """
    seed_everything(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = build_model(cfg)

    def batches(_step: int):
        lengths = torch.randint(1, cfg.l_max_train + 1, (cfg.batch,), generator=gen)
        tokens, bits = make_batch(cfg.batch, lengths, gen)
        return tokens, lengths, target(cfg.task, bits, lengths)

    def loss_fn(m, b):
        tokens, lengths, y = b
        return torch.nn.functional.mse_loss(predict(m, tokens, lengths), y)

    with pin_threads(1):
        losses = fit(
            model,
            batches,
            loss_fn,
            steps=cfg.steps,
            lr=cfg.lr,
            warmup=0,
            weight_decay=0.0,
            min_lr_ratio=1.0,
            progress=progress,
            message=f"{cfg.task}/{cfg.pe}",
            device=resolve_device(device) if device is not None else None,
            amp=amp,
        )
    return model, losses


@torch.no_grad()
def evaluate(
    model: CausalTransformer, cfg: SynthConfig, lengths=EVAL_LENGTHS, *, amp: str = "off"
) -> dict[int, float | None]:
    """MSE in original target units at each test length (None where the encoding refuses the length).

    Runs on the model's device; test batches are drawn on the CPU (the same on every device).
    """
    gen = torch.Generator().manual_seed(10_000 + cfg.seed)
    model.eval()
    dev = next(model.parameters()).device
    out: dict[int, float | None] = {}
    for length in lengths:
        ls = torch.full((cfg.eval_per_length,), length)
        tokens, bits = make_batch(cfg.eval_per_length, ls, gen)
        tokens, bits, ls = tokens.to(dev), bits.to(dev), ls.to(dev)
        try:
            with autocast(dev, amp):
                pred = decode(cfg.task, predict(model, tokens, ls).float())
        except ValueError:
            out[length] = None
            continue
        truth = target("length" if cfg.task == "outrep" else cfg.task, bits, ls)
        out[length] = float(((pred - truth) ** 2).mean())
    return out
