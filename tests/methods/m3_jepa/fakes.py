"""Stand-ins for M3-JEPA's frozen encoders, so its jobs run in seconds in tests (the device-leak runs).

The real caption states come from SmolLM2 (about ten minutes for the 1,827 captions on two cores,
cached per machine in the vector store); :func:`install` replaces them, for one test, with synthetic
token features of the real shapes (16 × 64 image tokens, up to 12 × 576 caption tokens, the real
labels and captions of the §6 split, the fit part cut to 240 pairs) in which a caption is a fixed
random map of its image's pooled tokens plus noise, so the pairing is learnable. Trained weights go
to a temporary folder, never to the shared model cache.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
import torch

FIT = 240  # two AGD steps per epoch at the fixed batch of 120


def synthetic_features(seed: int = 0):
    """:class:`methods.m3_jepa.train.Features` with the real split's labels and captions and synthetic tokens."""
    from methods.m3_jepa.data import D_IMG, N_TOKENS_IMG, class_prompts, split
    from methods.m3_jepa.textenc import D_TXT
    from methods.m3_jepa.train import Features

    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(10, D_IMG, generator=g)
    proj = torch.randn(D_IMG, D_TXT, generator=g) / D_IMG**0.5
    feats = Features(img={}, txt={}, mask={}, labels={}, prompts=None, prompt_mask=None, prompts_per_class=3)  # type: ignore[arg-type]
    for name, part in split().items():
        n = FIT if name == "fit" else len(part.labels)
        labels = torch.from_numpy(part.labels[:n])
        img = centers[labels][:, None, :] + 0.8 * torch.randn(n, N_TOKENS_IMG, D_IMG, generator=g)
        txt = (img.mean(1) @ proj)[:, None, :] + 0.3 * torch.randn(n, 12, D_TXT, generator=g)
        mask = torch.ones(n, 12, dtype=torch.bool)
        mask[::2, 9:] = False
        feats.img[name], feats.txt[name], feats.mask[name], feats.labels[name] = (
            img,
            txt * mask[..., None],
            mask,
            labels,
        )
        feats.captions[name] = part.captions[:n]
    per_class = len(class_prompts(0))
    feats.prompts = (centers @ proj).repeat_interleave(per_class, 0)[:, None, :].repeat(1, 12, 1)
    feats.prompt_mask = torch.ones(10 * per_class, 12, dtype=torch.bool)
    return feats


def install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Synthetic features, a synthetic caption encoder and a temporary model cache for M3-JEPA's jobs."""
    from methods.m3_jepa import experiment, features, textenc

    feats = synthetic_features()

    def caption_states(texts, **_):  # the same (n_words + 2, 576) states for the same text, as the cache gives
        return {
            t: np.random.default_rng(zlib.crc32(t.encode()))
            .standard_normal((len(t.split()) + 2, textenc.D_TXT))
            .astype(np.float32)
            for t in texts
        }

    monkeypatch.setattr(features, "load_features", lambda **_: feats)
    monkeypatch.setattr(features, "llm_digest", lambda *_a, **_k: "synthetic-text-features")
    monkeypatch.setattr(textenc, "cached_features", caption_states)
    monkeypatch.setattr(textenc, "token_strings", lambda texts, *_a, **_k: [t.split() + ["<s>", "</s>"] for t in texts])
    monkeypatch.setattr(experiment, "_checkpoint", lambda cfg: tmp_path / "m3_jepa" / f"{abs(hash(str(cfg)))}.pt")
