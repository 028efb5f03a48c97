"""Fixtures: an untrained tiny CLIP (built in milliseconds, never trained) and small synthetic X-TAIL pools."""

import pytest
import torch

from methods.lada.domains import DOMAIN_ORDER, _domain_classes, pool_features


@pytest.fixture(scope="session")
def tiny_backbone():
    from methods.vlm.backbone import tiny_clip
    from methods.vlm.config import TinyCLIPConfig
    from methods.vlm.tokenizer import WordTokenizer

    torch.manual_seed(0)
    names = [n for d in DOMAIN_ORDER for n in _domain_classes()[d]]
    tok = WordTokenizer.build(["a photo of a ."] + names)
    cfg = TinyCLIPConfig(
        vision_layers=1,
        text_layers=1,
        vision_width=32,
        text_width=32,
        embed_dim=32,
        wordnet=False,
        word_vectors="random",
    )
    return tiny_clip(cfg, tok).eval().requires_grad_(False)


def _images(n_classes: int, per_class: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    colours = torch.rand(n_classes, 3, 1, 1, generator=torch.Generator().manual_seed(99 + n_classes))
    y = torch.arange(n_classes).repeat(per_class)
    x = (0.8 * colours[y] + 0.2 * torch.rand(len(y), 3, 32, 32, generator=g)).clamp(0, 1)
    return x, y


@pytest.fixture(scope="session")
def small_pools():
    names = _domain_classes()
    return {
        d: {"train": _images(len(names[d]), 6, 10 + i), "test": _images(len(names[d]), 3, 50 + i)}
        for i, d in enumerate(DOMAIN_ORDER)
    }


@pytest.fixture(scope="session")
def small_features(tiny_backbone, small_pools):
    return pool_features(tiny_backbone, small_pools)


@pytest.fixture
def make_stream(tiny_backbone, small_pools, small_features):
    from methods.lada.domains import build_stream

    def make(seed=0, domains=("colours", "shapes", "textures"), shots=4):
        return build_stream(
            tiny_backbone, seed=seed, shots=shots, domains=domains, pools=small_pools, features=small_features
        )

    return make


@pytest.fixture(autouse=True)
def _one_thread():
    from methods.continual.harness import torch_threads

    with torch_threads(1):
        yield
