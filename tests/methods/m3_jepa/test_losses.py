"""The losses on hand-made tensors (spec §3.3, §7)."""

import math

import torch

from methods.m3_jepa.losses import direction_loss, info_nce, regression, symmetric_info_nce


def test_info_nce_by_hand():
    a = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    b = torch.tensor([[1.0, 0.0], [1.0, 1.0]])  # row 2 normalises to (1/√2, 1/√2)
    tau = 0.5
    s = torch.tensor([[1.0, 1 / math.sqrt(2)], [0.0, 1 / math.sqrt(2)]]) / tau
    want = 0.5 * (-(s[0, 0] - torch.logsumexp(s[0], 0)) - (s[1, 1] - torch.logsumexp(s[1], 0)))
    assert abs(float(info_nce(a, b, tau)) - float(want)) < 1e-6
    # scale does not matter (rows are L2-normalised)
    assert abs(float(info_nce(3 * a, 0.1 * b, tau)) - float(want)) < 1e-6


def test_info_nce_limits():
    eye = torch.eye(6)
    assert float(info_nce(eye, eye, 0.01)) < 1e-8
    g = torch.Generator().manual_seed(0)
    b = 512
    x, y = torch.randn(b, 64, generator=g), torch.randn(b, 64, generator=g)
    assert abs(float(info_nce(x, y, 1.0)) - math.log(b)) < 0.1


def test_symmetric_is_the_mean_of_both_directions():
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(7, 5, generator=g), torch.randn(7, 5, generator=g)
    assert abs(float(symmetric_info_nce(x, y)) - 0.5 * float(info_nce(x, y) + info_nce(y, x))) < 1e-6
    assert float(info_nce(x, y)) != float(info_nce(y, x))


def test_smooth_l1_by_hand():
    pred = torch.tensor([[0.0, 0.0, 0.0]])
    tgt = torch.tensor([[0.5, -2.0, 1.0]])
    # Huber β=1: 0.5·0.25, 2 − 0.5, 0.5·1 → mean
    assert abs(float(regression(pred, tgt)) - (0.125 + 1.5 + 0.5) / 3) < 1e-7


def test_direction_loss_weights():
    g = torch.Generator().manual_seed(2)
    cl_p, cl_t = torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)
    p, t = torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g)
    total, terms = direction_loss(cl_p, cl_t, p, t)
    assert abs(float(total) - 0.5 * (terms["cl"] + terms["reg"])) < 1e-5
    no_cl, _ = direction_loss(cl_p, cl_t, p, t, w_cl=0.0)
    assert abs(float(no_cl) - 0.5 * terms["reg"]) < 1e-6
    no_reg, _ = direction_loss(cl_p, cl_t, p, t, w_reg=0.0, w_task=1.0)
    assert abs(float(no_reg) - terms["cl"]) < 1e-5
