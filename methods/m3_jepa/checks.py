"""The spec's §7 mechanical checks, runnable anywhere (random tensors, seconds): the report runs them
and the tests assert them. Each returns ``(name, passed, detail)``.
"""

from __future__ import annotations

import math

import torch

from methods.m3_jepa.losses import info_nce, symmetric_info_nce
from methods.m3_jepa.model import M3Predictor, MoE, PredictorConfig
from methods.m3_jepa.train import TrainConfig, step_loss

Check = tuple[str, bool, str]


@torch.no_grad()
def moe_checks(seed: int = 0) -> list[Check]:
    g = torch.Generator().manual_seed(seed)
    out: list[Check] = []
    torch.manual_seed(seed)
    moe = MoE(16, 6, 2, 0.0).eval()
    z = torch.randn(4, 5, 16, generator=g)
    w, p = moe.routing(z)
    nz = (w > 0).sum(-1)
    top = p.topk(2, -1).values
    kept = w.gather(-1, p.topk(2, -1).indices)
    ok = bool((nz == 2).all() and torch.equal(kept, top) and (w.sum(-1) <= 1 + 1e-6).all() and (w.sum(-1) < 1).all())
    out.append(
        (
            "MoE: exactly k=2 of 6 experts non-zero; weights = the 2 largest softmax probs; sum < 1",
            ok,
            f"non-zero per token {sorted(set(nz.flatten().tolist()))}, max sum {float(w.sum(-1).max()):.3f}",
        )
    )
    dense = MoE(16, 6, 6, 0.0).eval()
    y = dense(z)
    _, pd = dense.routing(z)
    ref = sum(pd[..., j : j + 1] * dense.experts[j](z) for j in range(6))
    err = float((y - ref).abs().max())
    out.append(
        (
            "MoE: k = E equals the dense softmax mixture (weights sum to 1)",
            err < 1e-5 and bool(torch.allclose(dense.routing(z)[0].sum(-1), torch.ones(4, 5))),
            f"max |diff| {err:.2e}",
        )
    )
    one = MoE(16, 1, 1, 0.0).eval()
    err1 = float((one(z) - one.experts[0](z)).abs().max())
    out.append(("MoE: E = 1, k = 1 equals that expert's output", err1 < 1e-6, f"max |diff| {err1:.2e}"))
    return out


def shape_checks(seed: int = 0) -> list[Check]:
    torch.manual_seed(seed)
    cfg = PredictorConfig(d_img=64, d_txt=96, hidden=32, experts=4, top_k=2)
    m = M3Predictor(cfg).eval()
    img, txt = torch.randn(3, 16, 64), torch.randn(3, 7, 96)
    o1, o2 = m("i2t", img), m("t2i", txt, torch.ones(3, 7, dtype=torch.bool))
    ok = o1.pred.shape == (3, 96) and o1.cl.shape == (3, 32) and o2.pred.shape == (3, 64) and o2.cl.shape == (3, 32)
    return [
        (
            "Shapes: pred head → d_τ, CL head → h, pooled B × d",
            ok,
            f"i2t pred {tuple(o1.pred.shape)} cl {tuple(o1.cl.shape)}; t2i pred {tuple(o2.pred.shape)} cl {tuple(o2.cl.shape)}",
        )
    ]


def infonce_checks(seed: int = 0) -> list[Check]:
    g = torch.Generator().manual_seed(seed)
    eye = torch.eye(8)
    small = float(info_nce(eye, eye, tau=0.01))
    b = 256
    a, c = torch.randn(b, 32, generator=g), torch.randn(b, 32, generator=g)
    rnd = float(info_nce(a, c, tau=1.0))
    sym = float(symmetric_info_nce(a, c, 0.03))
    mean = 0.5 * float(info_nce(a, c, 0.03) + info_nce(c, a, 0.03))
    return [
        ("InfoNCE: a = b orthonormal rows → 0 as τ → 0", small < 1e-6, f"loss at τ=0.01: {small:.2e}"),
        (
            "InfoNCE: random unit vectors → ≈ log B",
            abs(rnd - math.log(b)) < 0.15,
            f"{rnd:.3f} vs log {b} = {math.log(b):.3f} (τ = 1)",
        ),
        ("Symmetric InfoNCE = mean of both directions", abs(sym - mean) < 1e-6, f"{sym:.5f} vs {mean:.5f}"),
    ]


def agd_checks(seed: int = 0) -> list[Check]:
    """After one direction's loss.backward(), only that direction's and the shared parameters have gradients."""
    torch.manual_seed(seed)
    cfg = TrainConfig(hidden=32, experts=4, top_k=2)
    m = M3Predictor(PredictorConfig(d_img=64, d_txt=96, hidden=32, experts=4, top_k=2))
    img, txt, mask = torch.randn(6, 16, 64), torch.randn(6, 5, 96), torch.ones(6, 5, dtype=torch.bool)
    out: list[Check] = []
    for d, other in (("t2i", "i2t"), ("i2t", "t2i")):
        m.zero_grad(set_to_none=True)
        loss, _ = step_loss(m, cfg, d, img, txt, mask)
        loss.backward()
        own = m.direction_parameters(d)
        oth = m.direction_parameters(other)
        shared = m.shared_parameters()
        own_ok = all(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in own.values())
        oth_ok = all(p.grad is None or float(p.grad.abs().sum()) == 0 for p in oth.values())
        used_shared = [k for k, p in shared.items() if p.grad is not None and float(p.grad.abs().sum()) > 0]
        out.append(
            (
                f"AGD: a {d} step gives gradients to {d}'s parameters and the shared experts/gate only",
                own_ok and oth_ok and any(k.startswith("block.gate") for k in used_shared),
                f"{len(own)} {d} tensors all non-zero: {own_ok}; {len(oth)} {other} tensors all zero: {oth_ok}; shared with grad: {len(used_shared)}/{len(shared)}",
            )
        )
    return out


def all_checks() -> list[Check]:
    return moe_checks() + shape_checks() + infonce_checks() + agd_checks()
