"""Can the M3-JEPA predictor learn at all? (issue #49: its prediction branch retrieves at chance in the study.)

A tiny separable set: four classes of source tokens, each mapped to its own target vector on top of a
large offset shared by every target (as the real targets have: mean-pooled CNN features, ‖mean‖ ≈ 2.3×
the item spread). Trained on the spec's losses through :func:`methods.m3_jepa.losses.direction_loss`,
both branches must fit it: the prediction branch (L_reg) far below the loss of predicting the mean
target, with every item's prediction nearest its own class's target; the contrastive branch (L_cl) with
every item retrieving its class. A predictor whose prediction head ignored its input, or a loss that did
not reach the prediction branch, fails here (checked below by breaking both).

The last test pins down what happens at the study's budget: with Adam at lr 1e-3 and ~100 steps per
direction, the prediction branch has not yet reached even the mean target when the targets sit far from
zero (an Adam step moves each bias by about lr), so its retrievals are at chance while the same model fits
the set in the same number of steps at a larger step size.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.train import pin_threads
from methods.m3_jepa.losses import direction_loss, regression
from methods.m3_jepa.model import M3Predictor, PredictorConfig

N_CLASS, PER_CLASS, T, D_SRC, D_TGT = 4, 16, 5, 12, 20


def _task(offset: float = 5.0, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(N_CLASS).repeat_interleave(PER_CLASS)
    patterns = torch.randn(N_CLASS, T, D_SRC, generator=g)
    src = patterns[labels] + 0.3 * torch.randn(len(labels), T, D_SRC, generator=g)
    centres = offset + torch.randn(N_CLASS, D_TGT, generator=g)  # a large shared offset + one vector per class
    tgt = centres[labels] + 0.05 * torch.randn(len(labels), D_TGT, generator=g)
    return src, tgt, labels, centres


def _train(model: M3Predictor, src, tgt, *, steps: int, lr: float, w_cl: float = 1.0, w_reg: float = 1.0):
    """i2t steps (source: the 'image' tokens of width D_SRC; target: 'text' of width D_TGT) on the whole set."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    tgt_tokens = tgt.unsqueeze(1)  # one target token: y_pred = its mean = tgt
    with pin_threads(1):
        for _ in range(steps):
            out = model("i2t", src)
            y_cl = model.target_cl("text", tgt_tokens)
            loss, _ = direction_loss(out.cl, y_cl, out.pred, tgt, w_cl=w_cl, w_reg=w_reg)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def _model(seed: int = 0) -> M3Predictor:
    torch.manual_seed(seed)
    return M3Predictor(PredictorConfig(d_img=D_SRC, d_txt=D_TGT, hidden=32, experts=4, top_k=2, dropout=0.0))


def _fit_report(model: M3Predictor, src, tgt, labels, centres) -> dict[str, float]:
    with torch.no_grad():
        out = model("i2t", src)
        y_cl = model.target_cl("text", tgt.unsqueeze(1))
        nearest = torch.cdist(out.pred, centres).argmin(1)
        cl_sim = F.normalize(out.cl, dim=-1) @ F.normalize(y_cl, dim=-1).T
        return {
            "reg": float(regression(out.pred, tgt)),
            "reg_mean": float(regression(tgt.mean(0).expand_as(tgt), tgt)),
            "pred_class_acc": float((nearest == labels).double().mean()),
            "cl_class_r1": float((labels[cl_sim.argmax(1)] == labels).double().mean()),
        }


def test_both_branches_fit_a_tiny_separable_set():
    src, tgt, labels, centres = _task()
    r = _fit_report(_train(_model(), src, tgt, steps=100, lr=3e-2), src, tgt, labels, centres)
    assert r["reg"] < 0.05 * r["reg_mean"], r  # far below predicting the mean target
    assert r["pred_class_acc"] == 1.0, r  # every prediction is nearest its own class's target
    assert r["cl_class_r1"] == 1.0, r


def test_the_fit_test_fails_when_the_prediction_branch_cannot_learn(monkeypatch):
    """The test above can fail: a prediction head that ignores its input, or no L_reg, does not fit the set."""
    src, tgt, labels, centres = _task()
    blind = _model()
    head = blind.pred_head["i2t"]
    monkeypatch.setattr(blind.pred_head, "i2t", torch.nn.Sequential(torch.nn.Flatten(), _Constant(head)))
    r = _fit_report(_train(blind, src, tgt, steps=100, lr=3e-2), src, tgt, labels, centres)
    assert r["pred_class_acc"] < 1.0 and r["reg"] > 0.05 * r["reg_mean"], r
    no_reg = _fit_report(_train(_model(), src, tgt, steps=100, lr=3e-2, w_reg=0.0), src, tgt, labels, centres)
    assert no_reg["reg"] > 0.05 * no_reg["reg_mean"], no_reg


class _Constant(torch.nn.Module):
    """A head that keeps only its bias: the same output whatever the input."""

    def __init__(self, head: torch.nn.Linear) -> None:
        super().__init__()
        self.bias = head.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bias.expand(x.shape[0], -1)


@pytest.mark.parametrize("offset", [5.0])
def test_at_the_study_budget_the_prediction_branch_has_not_reached_the_mean_target(offset):
    """lr 1e-3 and 100 steps (the study: 25 epochs × 8 batches, half of them per direction): L_reg is still above
    the mean-target predictor's, and the prediction branch does not separate the classes; the contrastive branch,
    whose targets are learned projections, already does."""
    src, tgt, labels, centres = _task(offset)
    r = _fit_report(_train(_model(), src, tgt, steps=100, lr=1e-3), src, tgt, labels, centres)
    assert r["reg"] > r["reg_mean"], r
    assert r["pred_class_acc"] < 1.0, r
    assert r["cl_class_r1"] == 1.0, r
