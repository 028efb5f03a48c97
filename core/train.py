"""A small training utility shared by the methods that train a model on CPU.

* :func:`lr_at` — linear warm-up, then cosine decay to ``min_ratio`` of the peak;
* :func:`adamw` — AdamW with explicit betas and weight decay;
* :func:`pin_threads` — set torch's intra-op threads for a block, restoring the old count;
* :func:`seed_everything` — seed ``random``, NumPy and torch;
* :func:`fit` — the one training loop: device and bf16 autocast, param groups, any schedule or
  optimizer, gradient accumulation, grad-norm clipping, early stop, losses read back every N steps.

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
from collections.abc import Callable, Iterable, Iterator, Mapping
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


Schedule = Callable[[int, float], "float | Mapping[str, Any]"]
"""``schedule(step, base_lr) -> lr`` of one optimizer step (0-based) for a group whose base rate is ``base_lr``;
or a mapping of the group's hyper-parameters for that step (``{"lr": ..., "weight_decay": ...}``: a
weight-decay schedule), set on the group as given."""


def constant_lr(step: int, base_lr: float) -> float:
    """A :data:`Schedule` that holds every group at its base rate."""
    return base_lr


def fit(
    model: Any,
    batches: Callable[[int], Any] | Iterable[Any],
    loss_fn: Callable[[Any, Any], Any],
    *,
    steps: int,
    lr: float,
    warmup: int = 0,
    weight_decay: float = 0.0,
    clip: float | None = 1.0,
    betas: tuple[float, float] = (0.9, 0.999),
    min_lr_ratio: float = 0.0,
    schedule: Schedule | None = None,
    param_groups: list[dict[str, Any]] | None = None,
    optimizer: Callable[[list[dict[str, Any]]], Any] | None = None,
    accumulate: int = 1,
    micro_batches: Callable[[int], int] | None = None,
    device: Any = None,
    amp: str = "off",
    sync_every: int = 25,
    on_step: Callable[[int, float], None] | None = None,
    after_step: Callable[[int], None] | None = None,
    stop: Callable[[int, list[float]], bool] | None = None,
    progress: Progress | None = None,
    message: str = "step",
    log_every: int = 100,
) -> list[float]:
    """Train ``model`` for up to ``steps`` optimizer steps; returns the loss of every step taken.

    Each step: set every group's learning rate (``schedule(step, base_lr)``; default :func:`lr_at`
    with ``warmup``, ``steps`` and ``min_lr_ratio``), then ``accumulate`` times take the next batch
    (``batches(i)`` if callable, else the next item; ``i`` counts micro-batches), move it to
    ``device``, ``loss = loss_fn(model, batch)`` under :func:`core.device.autocast`, backward
    (``loss / accumulate`` when accumulating); clip the global gradient norm to ``clip``
    (``None``: no clipping), optimizer step, ``after_step(step)`` (EMA updates; no sync).

    Args:
        param_groups: ``[{"params": [...], "lr": ..., "weight_decay": ...}, ...]`` (a group without
            ``lr``/``weight_decay`` takes ``lr``/``weight_decay``); default one group of every
            parameter that requires grad.
        optimizer: ``optimizer(groups) -> torch.optim.Optimizer``; default AdamW with ``betas``.
        micro_batches: ``micro_batches(step) -> n`` micro-batches in that step (default ``accumulate``
            each): a short last step of an epoch. Each micro-batch's loss is still divided by
            ``accumulate`` (the step is scaled as if full); its reported loss is the mean.
        device: where to train: the model is moved there once and each batch as it comes
            (``None``: leave both where they are). ``"auto"``/``"cuda"``/``"cpu"`` or a torch device.
        amp: ``"off"`` or ``"bf16"`` (autocast; the parameters and the optimizer stay fp32).
        sync_every: losses stay on the device and are read back every this many steps (and at the
            end); ``progress``, the log line and ``stop`` run at those points.
        on_step: ``on_step(step, loss)`` with the loss as a float: reads it back every step (a GPU
            sync); prefer ``after_step``.
        stop: ``stop(step, losses_so_far) -> True`` ends training early (checked at sync points).

    On the ``meta`` device (shapes, no numbers: the device-leak tests) every loss is NaN.
    On the CPU without AMP, with the defaults, the updates are bit-identical to the loop the
    methods had before this function existed (tests/core/test_train.py checks it).
    The model is in train mode during the loop and in eval mode afterwards.
    """
    import torch

    from core.device import autocast, resolve_device, step_barrier, to_device

    if (
        steps < 1
        or lr <= 0
        or warmup < 0
        or (clip is not None and clip <= 0)
        or log_every < 1
        or accumulate < 1
        or sync_every < 1
    ):
        raise ValueError(
            f"need steps >= 1, lr > 0, warmup >= 0, clip > 0 (or None), accumulate >= 1, sync_every >= 1 "
            f"and log_every >= 1 (got steps={steps}, lr={lr}, warmup={warmup}, clip={clip}, "
            f"accumulate={accumulate}, sync_every={sync_every}, log_every={log_every})"
        )
    dev = resolve_device(device) if device is not None else None
    if param_groups is not None:
        param_groups = [dict(g, params=list(g["params"])) for g in param_groups]
    if dev is not None:
        before = {id(p): name for name, p in model.named_parameters()}
        model.to(dev)
        if param_groups is not None:  # .to may replace the Parameters (lazy, meta, XLA): follow them by name
            after = dict(model.named_parameters())
            for g in param_groups:
                g["params"] = [after[before[id(p)]] if id(p) in before else p for p in g["params"]]
    amp_ctx_device = dev if dev is not None else _model_device(model)
    next_batch = batches if callable(batches) else _stepper(iter(batches))
    if param_groups is None:
        groups = [{"params": [p for p in model.parameters() if p.requires_grad]}]
    else:
        groups = [dict(g) for g in param_groups]
    for g in groups:
        g.setdefault("lr", lr)
        g.setdefault("weight_decay", weight_decay)
    base_lrs = [float(g["lr"]) for g in groups]
    params = [p for g in groups for p in g["params"]]
    if optimizer is None:
        opt = torch.optim.AdamW(groups, lr=lr, betas=betas, weight_decay=weight_decay)
    else:
        opt = optimizer(groups)
    if schedule is None:

        def schedule(step: int, base_lr: float) -> float:
            return lr_at(step, lr=base_lr, warmup=warmup, steps=steps, min_ratio=min_lr_ratio)

    losses: list[float] = []
    pending: list[Any] = []

    def flush() -> None:
        if not pending:
            return
        if pending[0].device.type == "meta":  # shapes only (the device-leak tests): nothing to read
            losses.extend([math.nan] * len(pending))
        else:  # one read-back for the steps since the last one
            losses.extend(float(v) for v in torch.stack(pending).cpu().tolist())
        pending.clear()

    model.train()
    taken = 0  # micro-batches so far
    for step in range(steps):
        for group, base in zip(opt.param_groups, base_lrs, strict=True):
            value = schedule(step, base)
            if isinstance(value, Mapping):
                group.update(value)
            else:
                group["lr"] = value
        opt.zero_grad(set_to_none=True)
        step_loss = None
        n_micro = accumulate if micro_batches is None else int(micro_batches(step))
        if n_micro < 1:
            raise ValueError(f"micro_batches({step}) must be >= 1, got {n_micro}")
        for _micro in range(n_micro):
            batch = next_batch(taken)
            taken += 1
            if dev is not None:
                batch = to_device(batch, dev)
            with autocast(amp_ctx_device, amp):
                loss = loss_fn(model, batch)
            if accumulate == 1 and n_micro == 1:
                loss.backward()
                step_loss = loss.detach()
            else:
                (loss / accumulate).backward()
                part = loss.detach().float() / accumulate
                step_loss = part if step_loss is None else step_loss + part
        if n_micro != accumulate:  # a short (or long) step: report the mean of its micro-batch losses
            step_loss = step_loss * (accumulate / n_micro)
        # lazy device: run the backward graph once here; clipping's norms and AdamW's lerp fall back to
        # eager one parameter at a time, and without the cut each fallback re-ran the whole graph
        step_barrier(amp_ctx_device)
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        step_barrier(amp_ctx_device)
        if on_step is not None:
            flush()
            value = math.nan if step_loss.device.type == "meta" else float(step_loss)
            losses.append(value)
            on_step(step, value)
        else:
            pending.append(step_loss.float() if step_loss.dtype != torch.float32 else step_loss)
        if after_step is not None:
            after_step(step)
        last = step + 1 == steps
        if on_step is not None or (step + 1) % sync_every == 0 or last or step % log_every == 0:
            flush()
            value = losses[-1]
            if progress is not None:
                progress((step + 1) / steps, f"{message} {step + 1}/{steps} loss {value:.3f}")
            if step % log_every == 0:
                log.info("%s %d/%d loss %.4f", message, step, steps, value)
            if stop is not None and not last and stop(step, losses):
                log.info("%s: stopped early after step %d/%d", message, step + 1, steps)
                break
    flush()
    model.eval()
    return losses


def _model_device(model: Any) -> Any:
    for p in model.parameters():
        return p.device
    return "cpu"


def _stepper(it: Iterator[Any]) -> Callable[[int], Any]:
    def take(step: int) -> Any:
        try:
            return next(it)
        except StopIteration:
            raise ValueError(f"batches ran out at step {step}") from None

    return take
