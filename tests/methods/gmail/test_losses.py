"""L_align (spec §7.1) and the CLIP loss: values at the extremes, direction of the gradient, bad input."""

import math

import pytest
import torch

from methods.gmail.losses import align_loss, clip_loss


@pytest.mark.parametrize("batch", [2, 7, 32])
def test_align_loss_is_log_batch_when_all_similarities_are_equal(batch):
    x = torch.randn(1, 16).expand(batch, 16)
    assert align_loss(x, x.clone(), tau=0.07).item() == pytest.approx(math.log(batch), abs=1e-5)


def test_align_loss_vanishes_when_each_anchor_matches_only_its_target():
    eye = torch.eye(8, 16)
    assert align_loss(eye, eye, tau=0.07).item() < 1e-5
    # shuffled targets: every anchor's positive is orthogonal to it, the loss is large
    assert align_loss(eye, eye.roll(1, 0), tau=0.07).item() > 10


def test_align_loss_uses_cosine_and_tau_and_matches_the_formula():
    g = torch.Generator().manual_seed(0)
    gen, real = torch.randn(5, 6, generator=g) * 3, torch.randn(5, 6, generator=g)
    sim = torch.nn.functional.normalize(gen, dim=-1) @ torch.nn.functional.normalize(real, dim=-1).t()
    manual = -(sim.diag() / 0.1 - torch.logsumexp(sim / 0.1, dim=1)).mean()
    assert align_loss(gen, real, tau=0.1).item() == pytest.approx(manual.item(), rel=1e-5)
    assert align_loss(gen * 10, real, tau=0.1).item() == pytest.approx(manual.item(), rel=1e-5)  # scale-free


def test_align_loss_is_asymmetric_generated_anchors_only():
    g = torch.Generator().manual_seed(1)
    gen, real = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)
    assert align_loss(gen, real).item() != pytest.approx(align_loss(real, gen).item(), rel=1e-3)


def test_align_loss_gradient_pulls_anchor_toward_its_pair():
    real = torch.nn.functional.normalize(torch.randn(4, 8, generator=torch.Generator().manual_seed(2)), dim=-1)
    gen = torch.randn(4, 8, generator=torch.Generator().manual_seed(3), requires_grad=True)
    before = torch.nn.functional.cosine_similarity(gen, real).mean().item()
    align_loss(gen, real).backward()
    with torch.no_grad():
        after = torch.nn.functional.cosine_similarity(gen - 0.5 * gen.grad, real).mean().item()
    assert after > before


def test_align_loss_rejects_unpaired_inputs_and_bad_tau():
    with pytest.raises(ValueError):
        align_loss(torch.zeros(3, 4), torch.zeros(4, 4))
    with pytest.raises(ValueError):
        align_loss(torch.ones(3, 4), torch.ones(3, 4), tau=0)


def test_clip_loss_is_symmetric_and_log_n_for_uniform_logits():
    x = torch.nn.functional.normalize(torch.ones(5, 3), dim=-1)
    assert clip_loss(x, x, 10.0).item() == pytest.approx(math.log(5), abs=1e-5)
    a, b = torch.eye(4), torch.eye(4)
    assert clip_loss(a, b, 50.0).item() < 1e-10 + 1e-6
