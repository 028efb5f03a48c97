"""The prompt learner, KgCoOp's and DOR's terms (spec dor.md §7.2, §7.6)."""

import torch

from methods.dor.prompt import PromptLearner
from methods.dor.tune import dor_term, kgcoop_term
from methods.vlm.zeroshot import text_classifier

NAMES = ["tomato", "brick", "tent", "golf ball"]


def test_template_init_reproduces_zero_shot_features(tiny):
    learner = PromptLearner(tiny, init="a photo of a")
    assert learner.n_ctx == 4
    with torch.no_grad():
        tuned = learner(NAMES)
    assert torch.allclose(tuned, text_classifier(tiny, NAMES), atol=1e-5)


def test_dor_and_kgcoop_terms_vanish_at_the_template_and_grow_after_perturbing(tiny):
    learner = PromptLearner(tiny, init="a photo of a")
    zs = text_classifier(tiny, NAMES)
    assert float(dor_term(learner(NAMES), zs).detach()) < 1e-6
    assert float(kgcoop_term(learner(NAMES), zs).detach()) < 1e-6
    with torch.no_grad():
        learner.ctx.add_(torch.randn(learner.ctx.shape, generator=torch.Generator().manual_seed(0)) * 0.5)
    assert float(dor_term(learner(NAMES), zs).detach()) > 1e-3
    assert float(kgcoop_term(learner(NAMES), zs).detach()) > 1e-3


def test_dor_term_is_one_minus_mean_cosine():
    a = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    b = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    assert float(dor_term(a, b)) == 0.5  # 1 - (1 + 0) / 2
    assert float(kgcoop_term(a, b)) == 1.0  # (0 + 2) / 2


def test_only_the_context_vectors_receive_gradients_and_change(tiny):
    learner = PromptLearner(tiny, n_ctx=6, init=None, seed=3)
    assert [n for n, p in learner.named_parameters()] == ["ctx"]
    before = {k: v.clone() for k, v in tiny.state_dict().items()}
    ctx0 = learner.ctx.detach().clone()
    opt = torch.optim.SGD(learner.parameters(), lr=1.0)
    loss = dor_term(learner(NAMES), text_classifier(tiny, NAMES))
    loss.backward()
    assert learner.ctx.grad is not None and learner.ctx.grad.abs().sum() > 0
    assert all(p.grad is None for p in tiny.parameters())
    opt.step()
    assert not torch.equal(learner.ctx.detach(), ctx0)
    assert all(torch.equal(before[k], v) for k, v in tiny.state_dict().items())


def test_random_init_is_seeded(tiny):
    a, b = PromptLearner(tiny, n_ctx=16, init=None, seed=1), PromptLearner(tiny, n_ctx=16, init=None, seed=1)
    assert torch.equal(a.ctx, b.ctx) and a.ctx.shape == (16, tiny.text_width)
