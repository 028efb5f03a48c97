"""Base-to-new prompt tuning with CoOp / KgCoOp, with or without DOR, and its evaluation (spec dor.md §3–§4).

Loss per step (base images, base classes):

    L = CE(s · f(x) · ψ'(c)ᵀ, y)                                   (CoOp)
      + λ_kg · mean_i ‖ψ'(c_i) − ψ(c_i)‖²                            (KgCoOp)
      + λ · (1 − (1/B) Σ_b cos(ψ'(o_b), ψ(o_b)))                      (DOR, o_b ~ O, fresh per step)

ψ' is the prompted (tuned) text feature, ψ the frozen zero-shot feature of "a photo of a {}.",
s the backbone's logit scale, f the frozen image encoder (features precomputed for a few augmented
views). Inference is unchanged by DOR: base and new test images are scored with the tuned prompt,
base images among the base classes and new images among the new classes.

Devices: the frozen features, the prompt learner and the outlier features live where the backbone
is; batches are drawn on the CPU (seeded generators, so every device draws the same ones) and
moved by :func:`core.train.fit`; losses stay on the device until the end of training.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from core.train import fit, seed_everything
from methods.dor.calibration import calibration_summary, feature_divergence
from methods.dor.config import TaskConfig, TuneConfig
from methods.dor.outliers import OutlierPool, OutlierSampler
from methods.dor.prompt import PromptLearner
from methods.vlm.data import load_dataset
from methods.vlm.zeroshot import classify, image_features, text_classifier

log = logging.getLogger(__name__)


@dataclass
class Task:
    """A base-to-new split with precomputed frozen image features."""

    base_names: list[str]
    new_names: list[str]
    train_feats: torch.Tensor  # (views, n, d), on the backbone's device
    train_labels: torch.Tensor  # (n,) in 0..n_base-1 (labels stay on the CPU)
    base_feats: torch.Tensor
    base_labels: torch.Tensor
    new_feats: torch.Tensor
    new_labels: torch.Tensor  # in 0..n_new-1
    seed: int = 0


def augment(images: torch.Tensor, g: torch.Generator, scale: tuple[float, float] = (0.5, 1.0)) -> torch.Tensor:
    """Random resized crop (area fraction in ``scale``) and horizontal flip, back to the input size."""
    n, _, h, w = images.shape
    out = torch.empty_like(images)
    for i in range(n):
        frac = float(torch.empty(1).uniform_(*scale, generator=g))
        side = max(4, int(round(h * frac**0.5)))
        y0 = int(torch.randint(0, h - side + 1, (1,), generator=g))
        x0 = int(torch.randint(0, w - side + 1, (1,), generator=g))
        crop = images[i : i + 1, :, y0 : y0 + side, x0 : x0 + side]
        crop = F.interpolate(crop, size=(h, w), mode="bilinear", align_corners=False)
        out[i] = crop[0].flip(-1) if bool(torch.rand(1, generator=g) < 0.5) else crop[0]
    return out


def make_task(backbone, task: TaskConfig, *, seed: int, views: int = 4) -> Task:
    """Few-shot base training set (seeded), base and new test sets, all encoded once."""
    train = load_dataset(task.dataset, "train")
    test = load_dataset(task.dataset, "test")
    names = list(train.classnames)
    if not 1 <= task.n_base < len(names):
        raise ValueError(f"n_base must be in [1, {len(names) - 1}] for {task.dataset}")
    base_ids = tuple(range(task.n_base))
    shots = train.few_shot(task.shots, seed, base_ids)
    g = torch.Generator().manual_seed(seed)
    view_list = [shots.images] + [augment(shots.images, g) for _ in range(views - 1)]
    train_feats = torch.stack([image_features(backbone, v) for v in view_list])
    is_base = test.labels < task.n_base
    return Task(
        base_names=names[: task.n_base],
        new_names=names[task.n_base :],
        train_feats=train_feats,
        train_labels=shots.labels.clone(),
        base_feats=image_features(backbone, test.images[is_base]),
        base_labels=test.labels[is_base],
        new_feats=image_features(backbone, test.images[~is_base]),
        new_labels=test.labels[~is_base] - task.n_base,
        seed=seed,
    )


@dataclass
class TuneResult:
    learner: PromptLearner
    losses: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0
    sampled: list[list[int]] = field(default_factory=list)  # the first steps' outlier indices (for checks)


def kgcoop_term(tuned: torch.Tensor, zero_shot: torch.Tensor) -> torch.Tensor:
    """mean_i ‖w_i − w_i^clip‖² over the base classes (both L2-normalised)."""
    return (tuned - zero_shot).pow(2).sum(-1).mean()


def dor_term(tuned: torch.Tensor, zero_shot: torch.Tensor) -> torch.Tensor:
    """L_DOR = 1 − (1/B) Σ_b cos(ψ'(o_b), ψ(o_b))."""
    return 1.0 - F.cosine_similarity(tuned, zero_shot, dim=-1).mean()


def tune(
    backbone,
    task: Task,
    cfg: TuneConfig,
    pool: OutlierPool | None,
    *,
    seed: int,
    progress=None,
    device=None,
    amp: str = "off",
) -> TuneResult:
    """Train the context vectors of one host (+ DOR when ``cfg.dor``) on the task's base shots.

    ``device`` (``None``: the backbone's) and ``amp`` go to :func:`core.train.fit`; the backbone and the
    task's features must already be there.
    """
    if device is None:
        device = getattr(backbone, "device", None)
    seed_everything(seed)
    learner = PromptLearner(backbone, n_ctx=cfg.n_ctx, init=cfg.effective_init(), seed=seed)
    scale = backbone.logit_scale
    zs_base = text_classifier(backbone, task.base_names)
    n = task.train_labels.numel()
    steps_per_epoch = max(1, -(-n // cfg.batch_size))
    steps = cfg.epochs * steps_per_epoch
    g = torch.Generator().manual_seed(seed + 1)
    use_dor = cfg.dor and cfg.effective_lambda() > 0
    if use_dor and pool is None:
        raise ValueError("DOR needs an outlier pool")
    sampler = (
        OutlierSampler(
            len(pool.words), cfg.outlier_batch, seed=seed + 2, resample=cfg.resample, steps_per_epoch=steps_per_epoch
        )
        if use_dor
        else None
    )
    parts: dict[str, list] = {"ce": [], "kg": [], "dor": []}  # detached losses, read back once at the end
    sampled: list[list[int]] = []
    order: list[int] = []

    def batch(step: int):
        nonlocal order
        if step % steps_per_epoch == 0:
            order = torch.randperm(n, generator=g).tolist()
        j = step % steps_per_epoch
        idx = torch.as_tensor(order[j * cfg.batch_size : (j + 1) * cfg.batch_size])
        view = torch.randint(0, task.train_feats.shape[0], (len(idx),), generator=g)
        at = task.train_feats.device
        return task.train_feats[view.to(at), idx.to(at)], task.train_labels[idx], step

    def loss_fn(model: PromptLearner, b):
        feats, labels, step = b
        text = model(task.base_names)
        loss = F.cross_entropy(classify(feats, text, scale), labels)
        parts["ce"].append(loss.detach())
        if cfg.host == "kgcoop" and cfg.lambda_kg > 0:
            kg = kgcoop_term(text, zs_base)
            parts["kg"].append(kg.detach())
            loss = loss + cfg.lambda_kg * kg
        if sampler is not None:
            idx = sampler(step)
            if len(sampled) < 3:
                sampled.append(idx.tolist())
            reg = dor_term(model([pool.words[i] for i in idx]), pool.features[idx.to(pool.features.device)])
            parts["dor"].append(reg.detach())
            loss = loss + cfg.effective_lambda() * reg
        return loss

    start = time.perf_counter()
    losses = fit(
        learner,
        batch,
        loss_fn,
        steps=steps,
        lr=cfg.lr,
        warmup=steps_per_epoch,
        weight_decay=cfg.weight_decay,
        clip=None,
        device=device,
        amp=amp,
        progress=progress,
        message=f"{cfg.host}{'+dor' if use_dor else ''} step",
        log_every=max(1, steps // 4),
    )
    read = {k: [float(x) for x in torch.stack(v).float().cpu().tolist()] for k, v in parts.items() if v}
    return TuneResult(learner, losses, read, time.perf_counter() - start, sampled)


@torch.no_grad()
def evaluate(backbone, task: Task, learner: PromptLearner | None, *, n_bins: int = 10) -> dict:
    """Base and new calibration (base among base classes, new among new), HM, FD; learner None = zero-shot."""
    scale = backbone.logit_scale
    out: dict = {}
    for split, names, feats, labels in (
        ("base", task.base_names, task.base_feats, task.base_labels),
        ("new", task.new_names, task.new_feats, task.new_labels),
    ):
        text = text_classifier(backbone, names) if learner is None else learner(names)
        logits = classify(feats, text, scale).cpu()  # the metrics are NumPy's
        labels = labels.cpu()
        out[split] = calibration_summary(logits, labels, n_bins)
        out[split]["fd"] = feature_divergence(text)
        out[f"{split}_logits"] = logits.numpy().astype(np.float32)
        out[f"{split}_labels"] = labels.numpy()
    a, b = out["base"]["acc"], out["new"]["acc"]
    out["hm"] = 2 * a * b / (a + b) if a + b > 0 else 0.0
    return out
