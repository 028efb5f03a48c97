"""Zero-shot helpers and contrastive training."""

import pytest
import torch

from methods.vlm.train import clip_loss
from methods.vlm.zeroshot import classify, prompts, retrieval_recall, text_classifier


def test_retrieval_recall_by_hand():
    eye = torch.eye(4)
    assert retrieval_recall(eye, eye, ks=(1,)) == {"i2t_r@1": 1.0, "t2i_r@1": 1.0}
    txt = eye[[1, 0, 2, 3]]  # images 0 and 1 see each other's caption first
    r = retrieval_recall(eye, txt, ks=(1, 2))
    assert r["i2t_r@1"] == 0.5 and r["t2i_r@1"] == 0.5
    with pytest.raises(ValueError):
        retrieval_recall(eye, eye[:3])


def test_classifier_shapes_and_scale(tiny):
    w = text_classifier(tiny, ["tomato", "brick", "tent"])
    assert w.shape == (3, tiny.model.config.projection_dim)
    assert torch.allclose(w.norm(dim=-1), torch.ones(3), atol=1e-5)
    logits = classify(torch.nn.functional.normalize(torch.randn(5, w.shape[1]), dim=-1), w, 10.0)
    assert logits.shape == (5, 3) and logits.abs().max() <= 10.0 + 1e-4
    assert prompts(["golf_ball"]) == ["a photo of a golf ball."]


def test_clip_loss_prefers_matched_pairs():
    f = torch.nn.functional.normalize(torch.randn(8, 16), dim=-1)
    matched = clip_loss(f, f, torch.tensor(20.0))
    shuffled = clip_loss(f, f[torch.randperm(8, generator=torch.Generator().manual_seed(0))], torch.tensor(20.0))
    assert matched < shuffled


def test_training_lowers_the_contrastive_loss(tiny_result):
    losses = tiny_result.losses
    assert len(losses) == 20
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.2
