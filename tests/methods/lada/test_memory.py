"""Label-specific memory units and DPT prototypes (spec §7 checks 3–6)."""

import pytest
import torch
import torch.nn.functional as F

from methods.lada.memory import LabelMemory, augment, fit_prototypes, kmeans_memory, label_scores


def _clusters(seed=0, d=16, n=30):
    g = torch.Generator().manual_seed(seed)
    means = F.normalize(torch.randn(3, d, generator=g), dim=-1)
    return means, [F.normalize(m + 0.15 * torch.randn(n, d, generator=g), dim=-1) for m in means]


def test_kmeans_rows_are_unit_and_nearest_their_own_class_mean():
    means, feats = _clusters()
    class_means = F.normalize(torch.stack([f.mean(0) for f in feats]), dim=-1)
    for c, x in enumerate(feats):
        w = kmeans_memory(x, 8, seed=0)
        assert w.shape == (8, 16)
        assert torch.allclose(w.norm(dim=-1), torch.ones(8), atol=1e-5)
        assert (w @ class_means.t()).argmax(1).eq(c).all()


def test_kmeans_with_fewer_samples_than_units_uses_every_sample_and_repeats():
    x = F.normalize(torch.randn(3, 8), dim=-1)
    w = kmeans_memory(x, 7)
    assert torch.allclose(w[:3], x, atol=1e-6) and torch.allclose(w[3:6], x, atol=1e-6) and torch.allclose(w[6], x[0])


def test_h_is_one_per_matching_unit_positive_monotone_and_lambda1_as_beta_vanishes():
    w = F.normalize(torch.randn(2, 5, 8), dim=-1)
    feat = w[0, 2:3]  # equal to one memory vector of label 0
    unit = torch.exp(-3.0 * (1 - w[0] @ feat[0]))
    assert unit[2] == pytest.approx(1.0)
    assert label_scores(feat, w, 3.0)[0, 0] == pytest.approx(float(unit.sum()))
    x = F.normalize(torch.randn(20, 8), dim=-1)
    s = label_scores(x, w, 3.0)
    assert (s > 0).all() and (s <= 5).all()
    one = w[:1, :1]  # a single unit: score grows with the cosine
    cos = (x @ one[0, 0]).squeeze()
    order = cos.argsort()
    assert (label_scores(x[order], one, 3.0).squeeze().diff() > 0).all()
    assert torch.allclose(label_scores(x, w, 1e-9), torch.full((20, 2), 5.0))


def test_memory_bank_grows_and_freezes_old_blocks():
    mem = LabelMemory(beta=5.0)
    a = mem.add_task(F.normalize(torch.randn(3, 4, 8), dim=-1))
    assert a.requires_grad
    b = mem.add_task(F.normalize(torch.randn(2, 4, 8), dim=-1))
    assert not mem.blocks[0].requires_grad and b.requires_grad
    x = F.normalize(torch.randn(6, 8), dim=-1)
    assert mem.phi(x).shape == (6, 4 * (3 + 2))
    assert mem(x).shape == (6, 5)


def test_gmm_augmentation_variance_matches_trace_over_d():
    _, feats = _clusters(seed=1, n=60)
    p = fit_prototypes(torch.cat(feats), 3, seed=0)
    assert p.means.shape == (3, 16) and p.weights.sum() == pytest.approx(1.0, abs=1e-5)
    g = torch.Generator().manual_seed(0)
    draws = torch.stack([augment(p, g, normalize=False) - p.means for _ in range(3000)])
    emp = draws.var(dim=0).mean(dim=1)
    assert torch.allclose(emp, p.noise**2, rtol=0.05)
    unit = augment(p, g)
    assert torch.allclose(unit.norm(dim=-1), torch.ones(3), atol=1e-5)


def test_centre_prototypes_are_uniform_and_noiseless():
    _, feats = _clusters(seed=2)
    p = fit_prototypes(feats[0], 4, mode="centres")
    assert torch.allclose(p.weights, torch.full((4,), 0.25)) and (p.noise == 0).all()
    assert torch.equal(augment(p, normalize=False), p.means)
