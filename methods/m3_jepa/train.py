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
) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss of one step: one direction (AGD), both summed (``task == "both"``), or the CLIP loss."""
    if isinstance(model, LinearCLIP):
        loss = symmetric_info_nce(model.embed("image", img), model.embed("text", txt, mask), cfg.tau)
        return loss, {"cl": float(loss.detach()), "reg": 0.0}
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
        parts = {k: parts[k] + terms[k] / len(tasks) for k in parts}
    return total, parts


def _val_recalls(model: torch.nn.Module, feats: Features) -> dict[str, float]:
    r = retrieval(embed(model, feats.img["val"], feats.txt["val"], feats.mask["val"]), feats.labels["val"])
    model.train()
    return r


def train(
    cfg: TrainConfig, feats: Features, *, progress: Callable[[float, str], Any] | None = None
) -> tuple[torch.nn.Module, dict[str, Any]]:
    """Train one model; returns it (best validation state, eval mode) and the history."""
    with pin_threads(1):
        seed_everything(cfg.seed)
        model = build_model(cfg, feats)
        gen = torch.Generator().manual_seed(cfg.seed)
        img, txt, mask = feats.img["fit"], feats.txt["fit"], feats.mask["fit"]
        if cfg.shuffle_captions:  # the random-caption control: pairs broken before training
            perm = torch.randperm(len(txt), generator=gen)
            txt, mask = txt[perm], mask[perm]
        n = len(img)
        per_epoch = n // cfg.batch_size
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=0.005)
        rng = np.random.default_rng(cfg.seed)
        history: dict[str, Any] = {"tasks": [], "loss": [], "cl": [], "reg": [], "val": [], "p_t2i": [], "lr": []}
        p_t2i, best, best_state, bad = 0.5, -1.0, None, 0
        t0 = time.perf_counter()
        step = 0
        model.train()
        for epoch in range(cfg.epochs):
            order = torch.randperm(n, generator=gen)
            for b in range(per_epoch):
                idx = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
                if cfg.model == "clip" or cfg.schedule == "summed":
                    task, sched = "both", "t2i"
                elif cfg.schedule == "round_robin":
                    task = DIRECTIONS[step % 2]
                    sched = task
                else:
                    task = "t2i" if rng.random() < p_t2i else "i2t"
                    sched = task
                lr, wd = lr_wd(sched, epoch + b / per_epoch, cfg.epochs, cfg.lr)
                for g in opt.param_groups:
                    g["lr"], g["weight_decay"] = lr, wd
                loss, terms = step_loss(model, cfg, task, img[idx], txt[idx], mask[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                history["tasks"].append(task)
                history["loss"].append(float(loss.detach()))
                history["cl"].append(terms["cl"])
                history["reg"].append(terms["reg"])
                history["lr"].append(lr)
                step += 1
            val = _val_recalls(model, feats)
            history["val"].append({k: val[k] for k in ("i2t_r1", "t2i_r1", "mean_recall")})
            if cfg.schedule == "sampled":
                r_t = np.mean([val[f"t2i_r{k}"] for k in (1, 5, 10)])
                r_i = np.mean([val[f"i2t_r{k}"] for k in (1, 5, 10)])
                p_t2i = task_probability(float(r_t), float(r_i), epoch + 1, cfg.min_prob, cfg.max_prob)
            history["p_t2i"].append(p_t2i)
            if val["mean_recall"] > best:
                best, best_state, bad = val["mean_recall"], copy.deepcopy(model.state_dict()), 0
                history["best_epoch"] = epoch + 1
            else:
                bad += 1
            if progress is not None:
                progress(
                    (epoch + 1) / cfg.epochs,
                    f"epoch {epoch + 1}/{cfg.epochs} loss {np.mean(history['loss'][-per_epoch:]):.3f} val R̄ {val['mean_recall']:.3f}",
                )
            if cfg.patience and bad >= cfg.patience:
                history["stopped_epoch"] = epoch + 1
                break
        if best_state is not None:
            model.load_state_dict(best_state)
        model.eval()
        history["train_s"] = time.perf_counter() - t0
        history["steps"] = step
    return model, history


def evaluate(model: torch.nn.Module, feats: Features) -> dict[str, Any]:
    """Test-split retrieval, zero-shot classification and (MoE) expert usage."""
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
    cfg: TrainConfig, feats: Features, *, progress: Callable[[float, str], Any] | None = None
) -> tuple[dict[str, Any], torch.nn.Module]:
    """Train + evaluate: a JSON-able result (config, metrics, usage, curves, task counts) and the model."""
    model, hist = train(cfg, feats, progress=progress)
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
