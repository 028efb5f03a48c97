"""Fine-tuning and evaluation of one arm (patch filter × layer mask) on one synthetic task.

An :class:`Arm` names the patch selection (``all``, ``ipf``, ``random``, ``fg_only``) at keep ratio ρ and
a layer genome (``None`` = all on). Kept patches are chosen once per image by the frozen pretrained model
(IPF's scorer) and the detector, then used for fine-tuning and inference alike (spec §3.3).

Fine-tuning and evaluation run where the pretrained model lives (or on ``device``): the task data stay
on the CPU and each batch is moved as it comes; only predictions and scores come back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from methods.double_filter import ipf
from methods.double_filter.flops import model_flops
from methods.double_filter.model import DoubleFilterVLP
from methods.double_filter.tasks import ANSWERS, TaskData


@dataclass(frozen=True)
class Arm:
    name: str
    patches: str = "all"  # all | ipf | random | fg_only
    rho: float = 1.0
    genome: tuple[int, ...] | None = None


@dataclass(frozen=True)
class IPFConfig:
    r_fg: float = 0.8
    tau: float = 0.5
    score_layers: int = 1
    detector: str = "components"


class TaskModel(nn.Module):
    """The VLP plus the task head: VQA answer classifier, NLVR pair classifier; retrieval uses ITC + ITM."""

    def __init__(self, vlp: DoubleFilterVLP, task: str):
        super().__init__()
        self.vlp, self.task = vlp, task
        w = vlp.cfg.width
        if task == "vqa":
            self.head = nn.Sequential(nn.Linear(w, w), nn.GELU(), nn.Linear(w, len(ANSWERS)))
        elif task == "nlvr":
            self.head = nn.Sequential(nn.Linear(2 * w, w), nn.GELU(), nn.Linear(w, 2))
        else:
            self.head = nn.Identity()

    def forward(self, images, tokens, keep=None):
        m = self.vlp
        txt, pad = m.encode_text(tokens)
        if self.task == "nlvr":  # images (n, 2, 3, H, W): fuse the statement with each image
            n = images.shape[0]
            img = m.encode_image(images.flatten(0, 1), None if keep is None else keep.flatten(0, 1))
            fused = m.fuse(txt.repeat_interleave(2, 0), pad.repeat_interleave(2, 0), img)
            return self.head(fused.reshape(n, -1))
        return self.head(m.fuse(txt, pad, m.encode_image(images, keep)))


def flat_images(data: TaskData) -> tuple[torch.Tensor, list[np.ndarray]]:
    if data.task == "nlvr":
        return data.images.flatten(0, 1), [b for pair in data.boxes for b in pair]
    return data.images, list(data.boxes)


def detected_boxes(data: TaskData, detector: str) -> list[np.ndarray]:
    images, gt = flat_images(data)
    return ipf.detect_all(ipf.make_detector(detector, images.shape[-1]), images, gt)


def keeps_for(arm: Arm, data: TaskData, scorer: DoubleFilterVLP, boxes, cfg: IPFConfig, seed: int):
    """(keep indices or None, seconds spent choosing them)."""
    if arm.patches == "all":
        return None, 0.0
    images, _ = flat_images(data)
    t0 = time.perf_counter()
    if arm.patches == "random":
        keep = ipf.random_keep(len(images), scorer.n_patches, arm.rho, seed)
    else:
        keep, _ = ipf.ipf_keep(
            scorer, images, boxes, arm.rho, r_fg=cfg.r_fg, tau=cfg.tau, score_layers=cfg.score_layers,
            fg_only=arm.patches == "fg_only",
        )  # fmt: skip
    seconds = time.perf_counter() - t0
    if data.task == "nlvr":
        keep = keep.view(len(data), 2, -1)
    return keep, seconds


def _loss(tm: TaskModel, batch, gen):
    images, tokens, labels, keep = batch
    if tm.task == "retrieval":
        from methods.double_filter.pretrain import itc_itm_loss

        return itc_itm_loss(tm.vlp, images, tokens, labels[:, None] == labels[None, :], gen, keep)
    return F.cross_entropy(tm(images, tokens, keep), labels)


def finetune(
    pretrained: DoubleFilterVLP,
    tok,
    train: TaskData,
    keep,
    genome,
    *,
    steps: int,
    batch_size: int = 48,
    lr: float = 5e-4,
    seed: int = 0,
    device: Any = None,
    amp: str = "off",
    progress=None,
    val: TaskData | None = None,
    val_keep=None,
    eval_every: int = 0,
) -> TaskModel:
    """Full fine-tuning (all parameters) of a copy of ``pretrained`` with ``genome`` and kept patches ``keep``.

    Trains on ``device`` (default: ``pretrained``'s device); the copy and its task head are built on the CPU
    with the seed (the same initial weights on every device) and moved. With ``val`` and ``eval_every``, the
    validation score (with ``val_keep``) is measured every ``eval_every`` steps and after the last one; the
    model's ``curve`` attribute holds ``[(step, score), ...]`` (step 0: before training) and ``losses`` every
    step's training loss. Measuring does not change the training (no random numbers are drawn).
    """
    from core.train import fit, seed_everything

    dev = _device_of(pretrained) if device is None else device
    seed_everything(seed)
    vlp = DoubleFilterVLP(pretrained.cfg, pretrained.tok_embed.num_embeddings)
    vlp.load_state_dict({k: v.detach().cpu() for k, v in pretrained.state_dict().items()})
    vlp.set_genome(genome if genome is not None else [1] * len(vlp.sublayers()))
    tm = TaskModel(vlp, train.task)
    tokens = tok(train.texts)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)

    def batch(step: int):
        idx = torch.from_numpy(rng.choice(len(train), min(batch_size, len(train)), replace=False))
        return train.images[idx], tokens[idx], train.labels[idx], None if keep is None else keep[idx]

    curve: list[tuple[int, float]] = []

    def measure(step: int) -> None:
        if val is None or eval_every <= 0 or not (step % eval_every == 0 or step == steps):
            return
        curve.append((step, float(evaluate(tm.eval(), val, tok, val_keep, top_k=8)["score"])))
        tm.train()

    if val is not None and eval_every > 0:
        tm.to(dev)
        measure(0)
    losses = fit(tm, batch, lambda m, b: _loss(m, b, gen), steps=steps, lr=lr, warmup=max(1, steps // 10),
                 weight_decay=0.05, device=dev, amp=amp, progress=progress, message=f"fine-tune {train.task}",
                 after_step=lambda step: measure(step + 1))  # fmt: skip
    tm.curve = curve
    tm.losses = [float(x) for x in losses]
    return tm.eval()


def _device_of(module: nn.Module) -> torch.device:
    return next(module.parameters()).device


@torch.no_grad()
def evaluate(tm: TaskModel, data: TaskData, tok, keep=None, *, gallery: int = 100, top_k: int = 16) -> dict:
    """Accuracy (VQA, NLVR; per item type too) or R@1/R@5 (retrieval, mean of both directions), and model seconds.

    Runs on ``tm``'s device; the seconds include moving the inputs there and the predictions back.
    """
    dev = _device_of(tm)
    tokens = tok(data.texts)

    def on(x):
        return None if x is None else x.to(dev)

    t0 = time.perf_counter()
    if tm.task != "retrieval":
        preds = torch.cat(
            [
                tm(
                    on(data.images[i : i + 128]),
                    on(tokens[i : i + 128]),
                    None if keep is None else on(keep[i : i + 128]),
                )
                .argmax(-1)
                .cpu()
                for i in range(0, len(data), 128)
            ]
        )
        seconds = time.perf_counter() - t0
        hit = (preds == data.labels).numpy()
        kinds = np.asarray(data.kinds)
        per = {k: float(hit[kinds == k].mean()) for k in sorted(set(data.kinds))}
        return {"score": float(hit.mean()), "per_kind": per, "seconds": seconds, "n": len(data),
                "hits": hit.astype(float).tolist()}  # fmt: skip
    r1, r5, hits = [], [], []
    for lo in range(0, len(data), gallery):
        hi = min(len(data), lo + gallery)
        r = _retrieval(tm.vlp, on(data.images[lo:hi]), on(tokens[lo:hi]), data.labels[lo:hi],
                       None if keep is None else on(keep[lo:hi]), top_k)  # fmt: skip
        r1.append(r[0])
        r5.append(r[1])
        hits += r[2]
    seconds = time.perf_counter() - t0
    return {"score": float(np.mean(r1)), "per_kind": {"R@5": float(np.mean(r5))}, "seconds": seconds, "n": len(data),
            "hits": hits}  # fmt: skip


def _retrieval(m: DoubleFilterVLP, images, tokens, labels, keep, top_k: int) -> tuple[float, float, list[float]]:
    """ALBEF protocol: ITC picks the top-k candidates, ITM re-ranks them; R@1 and R@5 averaged over t→i and i→t,
    and each item's R@1 (the mean of its text's and its image's hit: 0, 0.5 or 1).

    ``labels`` stay on the CPU; the model's inputs are on its device.
    """
    img = m.encode_image(images, keep)
    txt, pad = m.encode_text(tokens)
    zi, zt = m.itc_features(img, txt)
    sim = zi @ zt.T  # (images, texts)
    k = min(top_k, len(images))
    same = (labels[:, None] == labels[None, :]).numpy()
    out = []
    for direction in ("t2i", "i2t"):
        s = sim.T if direction == "t2i" else sim  # rows: queries
        cand = s.topk(k, dim=1).indices  # (q, k)
        q = torch.arange(len(s), device=s.device).repeat_interleave(k)
        c = cand.flatten()
        ii, tt = (c, q) if direction == "t2i" else (q, c)
        score = m.itm_head(m.fuse(txt[tt], pad[tt], img[ii])).softmax(-1)[:, 1].view(len(s), k)
        ranked = torch.gather(cand, 1, score.argsort(1, descending=True)).cpu().numpy()
        rel = np.take_along_axis(same if direction == "i2t" else same.T, ranked, 1)
        out.append((rel[:, :1].any(1).mean(), rel[:, :5].any(1).mean(), rel[:, :1].any(1)))
    per_item = (out[0][2].astype(float) + out[1][2].astype(float)) / 2
    return float(np.mean([o[0] for o in out])), float(np.mean([o[1] for o in out])), per_item.tolist()


def arm_flops(model: DoubleFilterVLP, task: str, arm: Arm, data: TaskData, tok, cfg: IPFConfig) -> dict:
    """Analytic per-sample FLOPs of ``arm`` on ``task`` (IPF arms include the scorer and the detector)."""
    n = model.n_patches
    kept = n if arm.patches == "all" else ipf.keep_count(arm.rho, n)
    n_txt = float((tok(data.texts) != 0).sum(1).float().mean())
    det = ipf.make_detector(cfg.detector, model.cfg.image_size).flops_per_image
    genome = arm.genome if arm.genome is not None else [1] * len(model.sublayers())
    return model_flops(
        model.cfg, model.sublayers(), genome, kept_patches=kept, n_txt=n_txt, images=2 if task == "nlvr" else 1,
        score_layers=cfg.score_layers if arm.patches in ("ipf", "fg_only") else 0,
        detector_flops=det if arm.patches in ("ipf", "fg_only") else 0.0,
    )  # fmt: skip
