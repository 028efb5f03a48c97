"""Train and evaluate one (backbone, p, seed) run with the §6 recipe through :func:`core.train.fit`.

AdamW (lr 1e-3, wd 0.05), linear warm-up then cosine down to the DeiT minimum lr (1e-5), batch 64,
±1 px shifts, label smoothing 0.1. As in DeiT/Adventurer (timm's optimizer factory), weight decay
applies to the weight matrices only: biases, norm gains, the position embedding, the class token and
the per-head SSM scalars (A_log, dt_bias, D) are not decayed. Only p changes between runs of one
backbone.

``device``/``amp`` choose where it trains (:mod:`core.device`): the batches are drawn on the CPU
from a CPU generator (so a CPU run is bit-identical to the loop this module had before
:func:`core.train.fit` existed) and moved to the device as they come; evaluation runs there too,
and only the accuracy comes back. FLOPs are counted on a CPU copy of the model, so they do not
depend on the device (the Triton scan on CUDA is invisible to torch's counter).
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import torch
import torch.nn.functional as F

from core.device import autocast, device_provenance, resolve_device
from core.train import fit, pin_threads, seed_everything
from methods.patch_scaling.data import load_split, random_shift
from methods.patch_scaling.model import build, forward_flops

NO_DECAY = ("pos_embed", "cls_token", "A_log", "dt_bias", "D")


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """DeiT/timm split: decay matrices and conv kernels; no decay for 1-D params and ``NO_DECAY`` names."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        leaf = name.rsplit(".", 1)[-1]
        (no_decay if p.ndim <= 1 or leaf in NO_DECAY else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def train_eval(
    backbone: str,
    patch: int,
    seed: int,
    *,
    image_size: int = 8,
    epochs: int = 100,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.05,
    warmup_epochs: float = 5.0,
    label_smoothing: float = 0.1,
    min_lr: float = 1e-5,
    dim: int = 64,
    depth: int = 4,
    flip_rule: str = "released",
    threads: int = 1,
    device: Any = "cpu",
    amp: str = "off",
    progress: Any = None,
) -> dict[str, Any]:
    """Returns test accuracy, FLOPs per image, tokens, parameter count, train wall-clock, final loss and device.

    ``device``: ``cpu`` / ``auto`` / ``cuda`` or any torch device; ``amp``: ``off`` or ``bf16``.
    """
    dev = resolve_device(device)
    xtr, ytr, xte, yte = load_split(image_size)
    with pin_threads(threads):
        seed_everything(seed)
        kw: dict[str, Any] = {"dim": dim, "depth": depth}
        if backbone == "adventurer":
            kw["flip_rule"] = flip_rule
        model = build(backbone, image_size=image_size, patch=patch, **kw)
        gen = torch.Generator().manual_seed(seed)
        per_epoch = math.ceil(len(ytr) / batch_size)
        steps = epochs * per_epoch
        order: list[torch.Tensor] = []

        def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
            k = step % per_epoch
            if k == 0:
                order[:] = [torch.randperm(len(ytr), generator=gen)]
            idx = order[0][k * batch_size : (k + 1) * batch_size]
            return random_shift(xtr[idx], gen), ytr[idx]

        def loss_fn(m: torch.nn.Module, b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
            return F.cross_entropy(m(b[0]), b[1], label_smoothing=label_smoothing)

        warmup = min(int(warmup_epochs * per_epoch), steps // 10)
        t0 = time.perf_counter()
        losses = fit(
            model,
            batch,
            loss_fn,
            steps=steps,
            lr=lr,
            warmup=warmup,
            min_lr_ratio=min_lr / lr,
            param_groups=param_groups(model, weight_decay),
            clip=None,
            device=dev,
            amp=amp,
            progress=progress,
            message=f"{backbone} p={patch} seed={seed} step",
        )
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        train_s = time.perf_counter() - t0
        with torch.no_grad(), autocast(dev, amp):
            xte_d = xte.to(dev)
            pred = torch.cat([model(xte_d[i : i + 270]).argmax(1) for i in range(0, len(yte), 270)])
        acc = float((pred == yte.to(dev)).float().mean())
        flops = forward_flops(model if dev.type == "cpu" else copy.deepcopy(model).cpu(), image_size)
    return {
        "backbone": backbone,
        "patch": patch,
        "seed": seed,
        "image_size": image_size,
        "tokens": (image_size // patch) ** 2,
        "accuracy": acc,
        "flops": flops,
        "params": sum(p.numel() for p in model.parameters()),
        "train_s": train_s,
        "epochs": epochs,
        "final_loss": losses[-1],
        **device_provenance(dev, amp),
    }
