"""Retrieval and zero-shot metrics (spec §6): exact-pair R@1/5/10 both ways, class-level R@1, zero-shot accuracy.

Exact-pair recall: query i's correct item is item i. Identical captions (same text ⇒ identical
features) tie exactly, so a hit is counted with its expectation under random tie-breaking:
P(rank ≤ K) = clip((K − g) / e, 0, 1) with g items scoring strictly higher and e items (the
correct one included) scoring equal. Chance R@K = K / N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from methods.m3_jepa.model import LinearCLIP, M3Predictor, masked_mean

KS = (1, 5, 10)


def recall_at(sim: torch.Tensor, ks: tuple[int, ...] = KS) -> dict[int, float]:
    """Exact-pair R@K of a square similarity matrix (queries × items, correct = diagonal)."""
    diag = sim.diagonal().unsqueeze(1)
    greater = (sim > diag).sum(1).double()
    equal = (sim == diag).sum(1).double()
    return {k: float(((k - greater) / equal).clamp(0, 1).mean()) for k in ks}


def class_r1(sim: torch.Tensor, q_labels: torch.Tensor, item_labels: torch.Tensor) -> float:
    """Fraction of queries whose top-1 item has the query's class."""
    return float((item_labels[sim.argmax(1)] == q_labels).double().mean())


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


@dataclass
class Embedded:
    """Queries and keys of one split: i→t queries vs text keys, t→i queries vs image keys."""

    q_i2t: torch.Tensor
    k_txt: torch.Tensor
    q_t2i: torch.Tensor
    k_img: torch.Tensor
    pred_i2t: torch.Tensor | None = None  # ŷ_pred vs the pooled target features (prediction space)
    y_txt: torch.Tensor | None = None
    pred_t2i: torch.Tensor | None = None
    y_img: torch.Tensor | None = None


@torch.no_grad()
def embed(model: Any, img: torch.Tensor, txt: torch.Tensor, mask: torch.Tensor) -> Embedded:
    model.eval()
    if isinstance(model, LinearCLIP):
        ei, et = model.embed("image", img), model.embed("text", txt, mask)
        return Embedded(ei, et, et, ei)
    assert isinstance(model, M3Predictor)
    oi, ot = model("i2t", img), model("t2i", txt, mask)
    return Embedded(
        q_i2t=oi.cl,
        k_txt=model.target_cl("text", txt, mask),
        q_t2i=ot.cl,
        k_img=model.target_cl("image", img),
        pred_i2t=oi.pred,
        y_txt=masked_mean(txt, mask),
        pred_t2i=ot.pred,
        y_img=img.mean(1),
    )


def retrieval(e: Embedded, labels: torch.Tensor) -> dict[str, float]:
    """R@1/5/10 both ways, class-level R@1 both ways and (M3 only) prediction-space R@1."""
    out: dict[str, float] = {}
    s_i2t, s_t2i = cosine(e.q_i2t, e.k_txt), cosine(e.q_t2i, e.k_img)
    for name, sim in (("i2t", s_i2t), ("t2i", s_t2i)):
        for k, v in recall_at(sim).items():
            out[f"{name}_r{k}"] = v
        out[f"{name}_class_r1"] = class_r1(sim, labels, labels)
    out["mean_r1"] = 0.5 * (out["i2t_r1"] + out["t2i_r1"])
    out["mean_recall"] = float(np.mean([out[f"{d}_r{k}"] for d in ("i2t", "t2i") for k in KS]))
    if e.pred_i2t is not None:
        out["pred_i2t_r1"] = recall_at(cosine(e.pred_i2t, e.y_txt), (1,))[1]
        out["pred_t2i_r1"] = recall_at(cosine(e.pred_t2i, e.y_img), (1,))[1]
    return out


@torch.no_grad()
def zero_shot(
    model: Any, img: torch.Tensor, labels: torch.Tensor, prompts: torch.Tensor, pmask: torch.Tensor, per_class: int
) -> dict[str, float]:
    """Class-name retrieval: prompts (10·per_class, class-major) embedded, scores averaged over a class's prompts.

    ``zs_i2t``: image query (i→t) against the prompts' text keys. ``zs_t2i``: each prompt's t→i query
    against the image keys, the image takes the class with the best mean score.
    """
    model.eval()
    n_cls = len(prompts) // per_class
    if isinstance(model, LinearCLIP):
        qi, kp = model.embed("image", img), model.embed("text", prompts, pmask)
        qp, ki = kp, qi
    else:
        qi, kp = model("i2t", img).cl, model.target_cl("text", prompts, pmask)
        qp, ki = model("t2i", prompts, pmask).cl, model.target_cl("image", img)
    s1 = cosine(qi, kp).view(len(img), n_cls, per_class).mean(-1)
    s2 = cosine(ki, qp).view(len(img), n_cls, per_class).mean(-1)
    return {
        "zs_i2t": float((s1.argmax(1) == labels).double().mean()),
        "zs_t2i": float((s2.argmax(1) == labels).double().mean()),
    }


@torch.no_grad()
def expert_usage(model: M3Predictor, img: torch.Tensor, txt: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
    """Mean routing weight and top-k selection rate per expert for each (direction, branch), over real tokens."""
    model.eval()
    out: dict[str, Any] = {}
    for direction, src, m in (("t2i", txt, mask), ("i2t", img, None)):
        o = model(direction, src, m, return_weights=True)
        if o.weights is None:
            return {}
        for branch, w in o.weights.items():
            keep = (
                m.reshape(-1)
                if m is not None
                else torch.ones(w.shape[0] * w.shape[1], dtype=torch.bool, device=w.device)
            )
            flat = w.reshape(-1, w.shape[-1])[keep]
            out[f"{direction}/{branch}"] = {
                "weight": flat.mean(0).tolist(),
                "selected": (flat > 0).double().mean(0).tolist(),
                "mass": float(flat.sum(1).mean()),
            }
    return out
