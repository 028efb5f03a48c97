"""Misalignment metric, regularizer and position-encoding behaviour (spec §7 unit invariants)."""

from __future__ import annotations

import random

import pytest
import torch
from torch.nn import functional as F

from methods.long_short_alignment.misalign import (
    entropy,
    misalignment_metric,
    sample_l_extra,
    sce,
    skl,
    split_window,
    two_window_loss,
)
from methods.long_short_alignment.model import CausalTransformer


def test_sce_skl_invariants_on_hand_built_distributions():
    p = torch.log(torch.tensor([[0.7, 0.2, 0.1]]))
    q = torch.log(torch.tensor([[0.1, 0.3, 0.6]]))
    # hand-computed: −Σ p log q − Σ q log p
    pp, qq = p.exp(), q.exp()
    expected = -(pp * q).sum() - (qq * p).sum()
    assert sce(p, q).item() == pytest.approx(expected.item(), rel=1e-6)
    assert sce(p, q).item() == pytest.approx(sce(q, p).item(), rel=1e-6)  # symmetric
    assert sce(p, p).item() == pytest.approx(2 * entropy(p).item(), rel=1e-6)  # SCE(p,p) = 2H(p) ≠ 0
    assert skl(p, p).item() == 0.0  # aligned → zero
    assert skl(p, q).item() > 0.1
    assert sce(p, q).item() >= entropy(p).item() + entropy(q).item()
    # SCE = H(p) + H(q) + SKL
    assert sce(p, q).item() == pytest.approx((entropy(p) + entropy(q) + skl(p, q)).item(), rel=1e-5)


def test_no_nan_when_probabilities_underflow():
    a = torch.tensor([[1000.0, -1000.0, 0.0]])
    b = torch.tensor([[-1000.0, 1000.0, 0.0]])
    for f in (sce, skl, entropy):
        v = f(a, b) if f is not entropy else f(a)
        assert torch.isfinite(v).all()
    assert skl(a, b).item() > 1000


def test_gradient_of_regularizer_matches_finite_differences():
    torch.manual_seed(0)
    a = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, y: 0.1 * sce(x, y).mean(), (a, b))
    assert torch.autograd.gradcheck(lambda x, y: skl(x, y).mean(), (a, b))


def test_window_indexing_and_l_extra_range():
    w = torch.arange(20)[None]
    s1, s2 = split_window(w, 12, 4)
    for t in range(4, 12):
        assert s1[0, t] == s2[0, t - 4]
    rng = random.Random(0)
    vals = {sample_l_extra(16, rng) for _ in range(500)}
    assert min(vals) == 1 and max(vals) == 8


class Bigram(torch.nn.Module):
    def __init__(self, v: int) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(v, v)

    def forward(self, x):
        return self.emb(x)


def test_bigram_is_aligned_attention_model_is_not():
    torch.manual_seed(0)
    w = torch.randint(0, 11, (4, 25))
    _, _, mis = two_window_loss(Bigram(11), w, l_train=16, l_extra=8, alpha=0.1, divergence="skl")
    assert mis.item() == pytest.approx(0.0, abs=1e-6)
    m = CausalTransformer(11, d=32, heads=2, layers=1, ffn=32, pe="nope", out_dim=11)
    _, _, mis = two_window_loss(m, w, l_train=16, l_extra=8, alpha=0.1, divergence="skl")
    assert mis.item() > 1e-3
    _, _, zero = two_window_loss(m, w, l_train=16, l_extra=0, alpha=0.1, divergence="skl")
    assert zero.item() == 0.0  # identical passes


def test_alpha_zero_equals_plain_cross_entropy():
    torch.manual_seed(0)
    m = CausalTransformer(11, d=32, heads=2, layers=1, ffn=32, pe="rope", out_dim=None)
    w = torch.randint(0, 11, (2, 17))
    total, ce, _ = two_window_loss(m, w, l_train=16, l_extra=0, alpha=0.0, train_loss_on="first")
    plain = F.cross_entropy(m(w[:, :16]).flatten(0, 1), w[:, 1:17].flatten())
    assert torch.equal(total, plain) and torch.equal(ce, plain)
    w = torch.randint(0, 11, (2, 21))
    t0, ce0, mis0 = two_window_loss(m, w, l_train=16, l_extra=4, alpha=0.0)
    t1, ce1, mis1 = two_window_loss(m, w, l_train=16, l_extra=4, alpha=0.5)
    assert torch.equal(t0, ce0) and t1.item() == pytest.approx(ce1.item() + 0.5 * mis1.item(), rel=1e-6)


def test_metric_is_finite_and_zero_for_bigram():
    ids = torch.randint(0, 11, (300,))
    out = misalignment_metric(Bigram(11), ids, l_train=32, n_samples=20, batch=8)
    assert out["skl"] == pytest.approx(0.0, abs=1e-6) and out["sce"] > 0


@pytest.mark.parametrize("pe", ["nope", "rope", "sinusoidal"])
def test_position_encodings_extrapolate(pe):
    m = CausalTransformer(4, d=16, heads=2, layers=1, ffn=16, pe=pe, max_positions=11)
    out = m(torch.randint(0, 4, (2, 60)))
    assert out.shape == (2, 60, 1) and torch.isfinite(out).all()


def test_learned_positions_refuse_longer_inputs():
    m = CausalTransformer(4, d=16, heads=2, layers=1, ffn=16, pe="learned", max_positions=11)
    assert m(torch.randint(0, 4, (2, 11))).shape == (2, 11, 1)
    with pytest.raises(ValueError, match="cannot extrapolate"):
        m(torch.randint(0, 4, (2, 12)))
    with pytest.raises(ValueError):
        CausalTransformer(4, pe="alibi")  # type: ignore[arg-type]


def test_rope_is_relative():
    """RoPE attention scores depend only on the offset: shifting both positions leaves q·k unchanged."""
    from methods.long_short_alignment.model import rope_rotate

    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)
    seq_q = q.expand(1, 1, 10, 8)
    seq_k = k.expand(1, 1, 10, 8)
    rq, rk = rope_rotate(seq_q), rope_rotate(seq_k)
    s1 = (rq[..., 5, :] * rk[..., 2, :]).sum()
    s2 = (rq[..., 8, :] * rk[..., 5, :]).sum()
    assert s1.item() == pytest.approx(s2.item(), rel=1e-4)
