"""A tiny CLIP trained for a few steps (no WordNet words in its vocabulary): fast enough for every test."""

import pytest

from methods.vlm.config import get_preset
from methods.vlm.train import train


@pytest.fixture(scope="session")
def tiny_result():
    return train(get_preset("test", steps=20, n_scenes=200, mix=(1.0, 0.0, 0.0)), wordnet=False)


@pytest.fixture(scope="session")
def tiny(tiny_result):
    return tiny_result.backbone
