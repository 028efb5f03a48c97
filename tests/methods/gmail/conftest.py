"""Shared fixtures: an untrained tiny CLIP (milliseconds to build) and a few real/generated pairs."""

import pytest


@pytest.fixture(scope="module")
def tiny_backbone():
    import torch

    from methods.vlm.backbone import tiny_clip
    from methods.vlm.config import get_preset
    from methods.vlm.train import build_tokenizer

    torch.manual_seed(0)
    preset = get_preset("test")
    return tiny_clip(preset.model, build_tokenizer(preset, wordnet=False)).eval().requires_grad_(False)


@pytest.fixture(scope="module")
def few_pairs():
    from methods.gmail.data import SPLIT_SALT, add_artifacts, render_pairs

    pairs = render_pairs("test", 12)
    pairs.gen = add_artifacts(pairs.clean_gen, 1.0, seed=SPLIT_SALT["test"])
    return pairs
