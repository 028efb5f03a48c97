"""A small training utility shared by the methods that train a model on CPU.

* :func:`lr_at` — linear warm-up, then cosine decay to ``min_ratio`` of the peak;
* :func:`adamw` — AdamW with explicit betas and weight decay;
* :func:`pin_threads` — set torch's intra-op threads for a block, restoring the old count;
* :func:`seed_everything` — seed ``random``, NumPy and torch;
* :func:`fit` — the loop: schedule, forward, backward, grad-norm clipping, step, loss history.

The formulas are the ones the methods used before they shared this module (any4's
clean model decays to 10 %, rf_solver's to 0), written so the learning rate at every
step is bit-identical: cached models trained by the old loops stay valid.

torch is imported lazily, so importing :mod:`core` does not load it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

log = logging.getLogger(__name__)

Progress = Callable[[float, str], Any]


def lr_at(step: int, *, lr: float, warmup: int, steps: int, min_ratio: float = 0.0) -> float:
    """The learning rate of ``step`` (0-based).

    ``lr * (step + 1) / warmup`` for the first ``warmup`` steps, then a half cosine from ``lr``
    down to ``min_ratio * lr`` at ``steps`` (held there after ``steps``).
    """
    if steps < 1 or warmup < 0 or step < 0 or not 0.0 <= min_ratio <= 1.0:
        raise ValueError(
            f"need steps >= 1, warmup >= 0, step >= 0 and 0 <= min_ratio <= 1 "
            f"(got steps={steps}, warmup={warmup}, step={step}, min_ratio={min_ratio})"
        )
    if step < warmup:
        return lr * (step + 1) / warmup
    frac = min((step - warmup) / max(1, steps - warmup), 1.0)
    return lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * frac)))


def adamw(params: Iterable[Any], *, lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.999)) -> Any:
    """``torch.optim.AdamW`` (torch's default betas unless given)."""
    import torch

    return torch.optim.AdamW(params, lr=lr, betas=betas, weight_decay=weight_decay)


@contextlib.contextmanager
def pin_threads(n: int | None) -> Iterator[int]:
    """Run the block with ``n`` torch intra-op threads (``0``/``None``: leave as is); restores the old count.

    Yields the thread count in effect inside the block.
    """
    import torch

    if n is not None and n < 0:
        raise ValueError(f"thread count must be >= 0, got {n}")
    previous = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)


def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and CUDA)."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def fit(
    model: Any,
    batches: Callable[[int], Any] | Iterable[Any],
    loss_fn: Callable[[Any, Any], Any],
    *,
    steps: int,
    lr: float,
    warmup: int,
    weight_decay: float,
    clip: float | None = 1.0,
    betas: tuple[float, float] = (0.9, 0.999),
    min_lr_ratio: float = 0.0,
    on_step: Callable[[int, float], None] | None = None,
    progress: Progress | None = None,
    message: str = "step",
    log_every: int = 100,
) -> list[float]:
    """Train ``model`` for ``steps`` optimizer steps; returns the loss of every step.

    Each step: set the scheduled learning rate (:func:`lr_at`), take the next batch
    (``batches(step)`` if callable, else the next item), ``loss = loss_fn(model, batch)``,
    backward, clip the global gradient norm to ``clip`` (``None``: no clipping), AdamW
    step, then ``on_step(step, loss)`` (EMA updates, callbacks) and ``progress``.
    The model is in train mode during the loop and in eval mode afterwards.
    """
    import torch

    if steps < 1 or lr <= 0 or warmup < 0 or (clip is not None and clip <= 0) or log_every < 1:
        raise ValueError(
            f"need steps >= 1, lr > 0, warmup >= 0, clip > 0 (or None) and log_every >= 1 "
            f"(got steps={steps}, lr={lr}, warmup={warmup}, clip={clip}, log_every={log_every})"
        )
    next_batch = batches if callable(batches) else _stepper(iter(batches))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = adamw(params, lr=lr, weight_decay=weight_decay, betas=betas)
    losses: list[float] = []
    model.train()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lr=lr, warmup=warmup, steps=steps, min_ratio=min_lr_ratio)
        loss = loss_fn(model, next_batch(step))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        value = float(loss.detach())
        losses.append(value)
        if on_step is not None:
            on_step(step, value)
        if progress is not None:
            progress((step + 1) / steps, f"{message} {step + 1}/{steps} loss {value:.3f}")
        if step % log_every == 0:
            log.info("%s %d/%d loss %.4f", message, step, steps, value)
    model.eval()
    return losses


def _stepper(it: Iterator[Any]) -> Callable[[int], Any]:
    def take(step: int) -> Any:
        try:
            return next(it)
        except StopIteration:
            raise ValueError(f"batches ran out at step {step}") from None

    return take
