"""Training with alternating gradient descent between the two directions (spec §3.4, §6).

Each optimisation step trains exactly ONE direction task (t2i or i2t): ``round_robin`` alternates
them, ``sampled`` draws the task with probabilities re-set each epoch from the validation recalls
(the weaker direction gets more steps). One AdamW optimiser; at every step the learning rate and
weight decay of the step's direction schedule are set (the paper swaps the schedulers' parameters
when the task switches). ``summed`` is the no-alternation ablation: both directions' losses summed
in every step. Parameters a step does not use get no gradient (``grad is None``), so AdamW leaves
them untouched.

Schedules (§3.4, with §6's peak lr 1e-3 and the paper's ratios): start = peak/1.5, linear warm-up
to the peak, cosine down to final = peak · 5.5e-6/1.5e-3; weight decay 0.005 → 0.2 (cosine).
Warm-up: t2i 0.1 epoch, i2t 10 % of the epochs (the released 50 of 500 epochs; read as epochs like
I-JEPA's schedulers). The schedules are indexed by the global training progress, so both reach
their final value at the end whatever the task mix.
Sampling (values absent from the released config, chosen here): p_t2i ∝ 1 − R̄_t2i against
1 − R̄_i2t (R̄ = mean validation R@1/5/10), shrunk toward ½ by 0.5 every 10 epochs, clipped to
[0.3, 0.7]. Early stopping: patience 10 epochs on the mean validation recall, best state kept.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from core.train import pin_threads, seed_everything
from methods.m3_jepa.evaluate import embed, expert_usage, retrieval, zero_shot
from methods.m3_jepa.losses import direction_loss, symmetric_info_nce
from methods.m3_jepa.model import DIRECTIONS, SOURCE, TARGET, LinearCLIP, M3Predictor, PredictorConfig, masked_mean

log = logging.getLogger(__name__)

Schedule = Literal["round_robin", "sampled", "summed"]


@dataclass(frozen=True)
class TrainConfig:
    """One training run (§6 defaults)."""

    model: Literal["m3", "clip"] = "m3"
    block: Literal["moe", "mlp"] = "moe"
    hidden: int = 128
    experts: int = 6
    top_k: int = 2
    dropout: float = 0.1
    schedule: Schedule = "round_robin"
    w_cl: float = 1.0
    w_reg: float = 1.0
    w_task: float = 0.5
    tau: float = 0.03
    epochs: int = 50
    batch_size: int = 120
    lr: float = 1e-3
    patience: int = 10
    shuffle_captions: bool = False
    seed: int = 0
    min_prob: float = 0.3
    max_prob: float = 0.7

    def predictor(self, d_img: int, d_txt: int) -> PredictorConfig:
        return PredictorConfig(d_img, d_txt, self.hidden, self.experts, self.top_k, self.dropout, self.block)


@dataclass
class Features:
    """Frozen-encoder features of the three parts: image tokens, padded text tokens + mask, labels."""

    img: dict[str, torch.Tensor]
    txt: dict[str, torch.Tensor]
    mask: dict[str, torch.Tensor]
    labels: dict[str, torch.Tensor]
    prompts: torch.Tensor
    prompt_mask: torch.Tensor
    prompts_per_class: int
    captions: dict[str, tuple[str, ...]] = field(default_factory=dict)


def lr_wd(direction: str, epoch: float, epochs: int, peak: float) -> tuple[float, float]:
    """The (lr, weight decay) of ``direction``'s schedule at fractional ``epoch``."""
    start, final = peak / 1.5, peak * 5.5e-6 / 1.5e-3
    warm = 0.1 if direction == "t2i" else 0.1 * epochs
    if epoch < warm:
        lr = start + (peak - start) * epoch / warm
    else:
        frac = min(1.0, (epoch - warm) / max(1e-9, epochs - warm))
        lr = final + (peak - final) * 0.5 * (1 + math.cos(math.pi * frac))
    frac = min(1.0, epoch / epochs)
    wd = 0.005 + (0.2 - 0.005) * 0.5 * (1 - math.cos(math.pi * frac))
    return lr, wd


def task_probability(r_t2i: float, r_i2t: float, epoch: int, lo: float = 0.3, hi: float = 0.7) -> float:
    """P(t2i step): the weaker direction gets more steps, shrunk toward ½ by 0.5 every 10 epochs, clipped."""
    a, b = 1 - r_t2i, 1 - r_i2t
    p = 0.5 if a + b <= 0 else a / (a + b)
    p = 0.5 + (p - 0.5) * 0.5 ** (epoch // 10)
    return float(min(hi, max(lo, p)))


def build_model(cfg: TrainConfig, feats: Features) -> torch.nn.Module:
    d_img, d_txt = feats.img["fit"].shape[-1], feats.txt["fit"].shape[-1]
    if cfg.model == "clip":
        return LinearCLIP(d_img, d_txt, cfg.hidden)
    return M3Predictor(cfg.predictor(d_img, d_txt))


def step_loss(
    model: torch.nn.Module, cfg: TrainConfig, task: str, img: torch.Tensor, txt: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The loss of one step: one direction (AGD), both summed (``task == "both"``), or the CLIP loss.

    The terms (L_cl, L_reg; averaged over the step's directions) come back as detached float64
    0-dim tensors on the loss's device, so a training step needs no read-back.
    """
    if isinstance(model, LinearCLIP):
        loss = symmetric_info_nce(model.embed("image", img), model.embed("text", txt, mask), cfg.tau)
        cl = loss.detach().double()
        return loss, {"cl": cl, "reg": torch.zeros_like(cl)}
    tasks = DIRECTIONS if task == "both" else (task,)
    tokens = {"image": (img, None), "text": (txt, mask)}
    total, parts = 0.0, {"cl": 0.0, "reg": 0.0}
    for d in tasks:
        src, smask = tokens[SOURCE[d]]
        tgt, tmask = tokens[TARGET[d]]
        out = model(d, src, smask)
        y_cl = model.target_cl(TARGET[d], tgt, tmask)
        y_pred = masked_mean(tgt, tmask)
        loss, terms = direction_loss(
            out.cl, y_cl, out.pred, y_pred, w_task=cfg.w_task, w_cl=cfg.w_cl, w_reg=cfg.w_reg, tau=cfg.tau
        )
        total = total + loss
        parts = {k: parts[k] + terms[k].double() / len(tasks) for k in parts}
    return total, parts


def _val_recalls(model: torch.nn.Module, feats: Features) -> dict[str, float]:
    r = retrieval(embed(model, feats.img["val"], feats.txt["val"], feats.mask["val"]), feats.labels["val"])
    model.train()
    return r


def features_on(feats: Features, device: Any) -> Features:
    """``feats`` with every tensor on ``device`` (tensors already there are not copied)."""
    from core.device import to_device

    moved = [to_device(getattr(feats, k), device) for k in ("img", "txt", "mask", "labels", "prompts", "prompt_mask")]
    return Features(*moved, prompts_per_class=feats.prompts_per_class, captions=feats.captions)


class _AGD:
    """The step plan of AGD training: per epoch the batch order and each step's task, per step (lr, weight decay).

    An epoch's plan is drawn when its first step asks for it, so the sampling probability set by the
    previous epoch's validation is the one used; the draws (batch order from ``gen``, tasks from ``rng``)
    come in the order the per-step loop drew them.
    """

    def __init__(self, cfg: TrainConfig, n: int, per_epoch: int, gen: torch.Generator, rng: np.random.Generator):
        self.cfg, self.n, self.per_epoch, self.gen, self.rng = cfg, n, per_epoch, gen, rng
        self.p_t2i = 0.5
        self.epoch = -1
        self.order: torch.Tensor | None = None
        self.tasks: list[tuple[str, str]] = []  # (task, schedule) of each step of the epoch

    def plan(self, step: int) -> tuple[str, str, int, int]:
        """(task, schedule direction, epoch, index in the epoch) of ``step``."""
        epoch, b = divmod(step, self.per_epoch)
        if epoch != self.epoch:
            self.epoch = epoch
            self.order = torch.randperm(self.n, generator=self.gen)
            cfg = self.cfg
            self.tasks = []
            for k in range(self.per_epoch):
                if cfg.model == "clip" or cfg.schedule == "summed":
                    self.tasks.append(("both", "t2i"))
                elif cfg.schedule == "round_robin":
                    task = DIRECTIONS[(epoch * self.per_epoch + k) % 2]
                    self.tasks.append((task, task))
                else:
                    task = "t2i" if self.rng.random() < self.p_t2i else "i2t"
                    self.tasks.append((task, task))
        task, sched = self.tasks[b]
        return task, sched, epoch, b

    def indices(self, step: int) -> torch.Tensor:
        _, _, _, b = self.plan(step)
        assert self.order is not None
        return self.order[b * self.cfg.batch_size : (b + 1) * self.cfg.batch_size]


def train(
    cfg: TrainConfig,
    feats: Features,
    *,
    progress: Callable[[float, str], Any] | None = None,
    device: Any = "cpu",
    amp: str = "off",
) -> tuple[torch.nn.Module, dict[str, Any]]:
    """Train one model on ``device`` through :func:`core.train.fit`; returns it (best validation state, eval mode) and the history.

    Each epoch: ``n // batch_size`` AGD steps (no gradient clipping; each step sets the learning rate
    and weight decay of its direction's schedule), then the validation recalls (sampling probability,
    best state, early stopping). On the CPU with ``amp="off"`` every number is the one the loop had
    before it moved onto ``fit``.
    """
    from core.device import resolve_device
    from core.train import fit

    dev = resolve_device(device)
    with pin_threads(1):
        seed_everything(cfg.seed)
        model = build_model(cfg, feats).to(dev)
        gen = torch.Generator().manual_seed(cfg.seed)
        img, txt, mask = feats.img["fit"], feats.txt["fit"], feats.mask["fit"]
        if cfg.shuffle_captions:  # the random-caption control: pairs broken before training
            perm = torch.randperm(len(txt), generator=gen)
            txt, mask = txt[perm], mask[perm]
        feats = features_on(feats, dev)
        img, txt, mask = img.to(dev), txt.to(dev), mask.to(dev)
        n = len(img)
        per_epoch = n // cfg.batch_size
        if per_epoch < 1:
            raise ValueError(f"batch_size {cfg.batch_size} is larger than the {n} training pairs")
        agd = _AGD(cfg, n, per_epoch, gen, np.random.default_rng(cfg.seed))
        history: dict[str, Any] = {"tasks": [], "loss": [], "cl": [], "reg": [], "val": [], "p_t2i": [], "lr": []}
        terms: dict[str, list[torch.Tensor]] = {"cl": [], "reg": []}
        epoch_losses: list[torch.Tensor] = []
        state: dict[str, Any] = {"best": -1.0, "best_state": None, "bad": 0, "stop": False}

        def hyper(step: int, _base_lr: float) -> dict[str, float]:
            task, sched, epoch, b = agd.plan(step)
            lr, wd = lr_wd(sched, epoch + b / per_epoch, cfg.epochs, cfg.lr)
            history["tasks"].append(task)
            history["lr"].append(lr)
            return {"lr": lr, "weight_decay": wd}

        def batch(step: int):
            idx = agd.indices(step).to(dev)
            return agd.plan(step)[0], img[idx], txt[idx], mask[idx]

        def loss_fn(m: torch.nn.Module, b) -> torch.Tensor:
            loss, parts = step_loss(m, cfg, *b)
            terms["cl"].append(parts["cl"])
            terms["reg"].append(parts["reg"])
            epoch_losses.append(loss.detach())
            return loss

        def end_of_epoch(step: int) -> None:
            if (step + 1) % per_epoch:
                return
            epoch = step // per_epoch
            val = _val_recalls(model, feats)
            history["val"].append({k: val[k] for k in ("i2t_r1", "t2i_r1", "mean_recall")})
            if cfg.schedule == "sampled":
                r_t = np.mean([val[f"t2i_r{k}"] for k in (1, 5, 10)])
                r_i = np.mean([val[f"i2t_r{k}"] for k in (1, 5, 10)])
                agd.p_t2i = task_probability(float(r_t), float(r_i), epoch + 1, cfg.min_prob, cfg.max_prob)
            history["p_t2i"].append(agd.p_t2i)
            if val["mean_recall"] > state["best"]:
                state.update(best=val["mean_recall"], best_state=copy.deepcopy(model.state_dict()), bad=0)
                history["best_epoch"] = epoch + 1
            else:
                state["bad"] += 1
            if progress is not None:
                mean_loss = float(torch.stack(epoch_losses).float().mean().cpu())
                progress(
                    (epoch + 1) / cfg.epochs,
                    f"epoch {epoch + 1}/{cfg.epochs} loss {mean_loss:.3f} val R̄ {val['mean_recall']:.3f}",
                )
            epoch_losses.clear()
            if cfg.patience and state["bad"] >= cfg.patience:
                history["stopped_epoch"] = epoch + 1
                state["stop"] = True

        t0 = time.perf_counter()
        losses = fit(
            model,
            batch,
            loss_fn,
            steps=cfg.epochs * per_epoch,
            lr=cfg.lr,
            weight_decay=0.005,
            clip=None,
            schedule=hyper,
            device=dev,
            amp=amp,
            sync_every=per_epoch,
            after_step=end_of_epoch,
            stop=lambda step, _losses: state["stop"],
            message="AGD",
        )
        if state["best_state"] is not None:
            model.load_state_dict(state["best_state"])
        model.eval()
        history["loss"] = losses
        for k in ("cl", "reg"):
            history[k] = torch.stack(terms[k]).cpu().tolist() if terms[k] else []
        history["train_s"] = time.perf_counter() - t0
        history["steps"] = len(losses)
    return model, history


def evaluate(model: torch.nn.Module, feats: Features) -> dict[str, Any]:
    """Test-split retrieval, zero-shot classification and (MoE) expert usage, on the model's device."""
    feats = features_on(feats, next(model.parameters()).device)
    with pin_threads(1):
        e = embed(model, feats.img["test"], feats.txt["test"], feats.mask["test"])
        metrics = retrieval(e, feats.labels["test"])
        metrics.update(
            zero_shot(
                model,
                feats.img["test"],
                feats.labels["test"],
                feats.prompts,
                feats.prompt_mask,
                feats.prompts_per_class,
            )
        )
        usage = {}
        if isinstance(model, M3Predictor):
            usage = expert_usage(model, feats.img["test"], feats.txt["test"], feats.mask["test"])
    return {"metrics": metrics, "usage": usage}


def run(
    cfg: TrainConfig,
    feats: Features,
    *,
    progress: Callable[[float, str], Any] | None = None,
    device: Any = "cpu",
    amp: str = "off",
) -> tuple[dict[str, Any], torch.nn.Module]:
    """Train (on ``device``, ``amp``) + evaluate: a JSON-able result (config, metrics, usage, curves, task counts) and the model."""
    model, hist = train(cfg, feats, progress=progress, device=device, amp=amp)
    ev = evaluate(model, feats)
    tasks = hist["tasks"]
    return {
        "config": asdict(cfg),
        "metrics": ev["metrics"],
        "usage": ev["usage"],
        "train_s": hist["train_s"],
        "steps": hist["steps"],
        "best_epoch": hist.get("best_epoch"),
        "stopped_epoch": hist.get("stopped_epoch"),
        "task_counts": {t: tasks.count(t) for t in ("t2i", "i2t", "both")},
        "alternates": all(a != b for a, b in zip(tasks, tasks[1:], strict=False)),
        "p_t2i": hist["p_t2i"],
        "val": hist["val"],
        "loss": hist["loss"][:: max(1, len(hist["loss"]) // 200)],
        "final_cl": float(np.mean(hist["cl"][-10:])),
        "final_reg": float(np.mean(hist["reg"][-10:])),
        "params": sum(p.numel() for p in model.parameters()),
    }, model
