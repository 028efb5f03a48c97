"""Assemble the frozen features of the §6 task: image tokens (frozen CNN) and caption tokens (frozen SmolLM2).

:func:`load_features` is what every run uses; the caption states come from the vector-store cache
(computed once per caption), the image tokens from the cached frozen encoder. The digests of both
encoders are recorded so a run can show they were bitwise unchanged by training.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from core.lazy import locked_cache
from methods.m3_jepa.data import class_prompts, frozen_encoder, image_tokens, split, state_digest
from methods.m3_jepa.textenc import cached_features, pad
from methods.m3_jepa.train import Features

log = logging.getLogger(__name__)


def normalise_tokens(a: np.ndarray) -> np.ndarray:
    """Parameter-free per-token LayerNorm of the frozen LLM states (fixed, not learned).

    The mean of SmolLM2's last two hidden layers mixes the final-normed layer with the raw residual
    stream, whose "massive activations" give a few tokens norms ~10× the others (3,000 vs 300); the
    fixed normalisation keeps those few dimensions from dominating the inputs and the regression target.
    """
    a = a.astype(np.float32)
    mu = a.mean(1, keepdims=True)
    sd = a.std(1, keepdims=True) + 1e-5
    return (a - mu) / sd


def all_texts() -> list[str]:
    parts = split()
    texts = [c for p in parts.values() for c in p.captions]
    return texts + [t for c in range(10) for t in class_prompts(c)]


def load_features(
    *, store: Any = None, model_name: str | None = None, progress: Callable[[float, str], Any] | None = None
) -> Features:
    """Features of fit/val/test + the 30 zero-shot prompts (10 classes × 3 templates)."""
    return _load(store, model_name, progress)


def _load(store: Any, model_name: str | None, progress: Callable[[float, str], Any] | None) -> Features:
    key = (id(store), model_name)
    if key in _CACHE:
        return _CACHE[key]
    parts = split()
    enc = image_encoder()
    text_feats = cached_features(all_texts(), store=store, model_name=model_name, progress=progress)
    text_feats = {t: normalise_tokens(a) for t, a in text_feats.items()}
    length = max(len(a) for a in text_feats.values())
    feats = Features(img={}, txt={}, mask={}, labels={}, prompts=None, prompt_mask=None, prompts_per_class=3)  # type: ignore[arg-type]
    for name, p in parts.items():
        feats.img[name] = image_tokens(enc, p.images)
        feats.txt[name], feats.mask[name] = pad([text_feats[c] for c in p.captions], length)
        feats.labels[name] = torch.from_numpy(p.labels)
        feats.captions[name] = p.captions
    prompts = [t for c in range(10) for t in class_prompts(c)]
    feats.prompts, feats.prompt_mask = pad([text_feats[t] for t in prompts], length)
    _CACHE[key] = feats
    return feats


_CACHE: dict[tuple[int, str | None], Features] = {}


@locked_cache(maxsize=1)
def image_encoder():
    """The one in-process instance of the frozen image encoder (the digests are taken of this object)."""
    return frozen_encoder()


def encoder_digest() -> str:
    """SHA-256 of the live frozen image encoder's weights."""
    return state_digest(image_encoder())


def llm_digest(model_name: str | None = None) -> str:
    """SHA-256 over the local LLM's parameters (for the frozen-text-encoder check)."""
    from core.llm import get_local_model

    return state_digest(get_local_model(model_name).model)


def describe(feats: Features) -> dict[str, Any]:
    """Sizes for the report."""
    return {
        "fit": len(feats.labels["fit"]),
        "val": len(feats.labels["val"]),
        "test": len(feats.labels["test"]),
        "img_tokens": tuple(feats.img["test"].shape[1:]),
        "txt_tokens_max": int(feats.txt["test"].shape[1]),
        "txt_tokens_mean": float(feats.mask["test"].sum(1).double().mean()),
        "unique_captions": len(set(c for p in feats.captions.values() for c in p)),
        "test_unique_captions": len(set(feats.captions["test"])),
        "txt_feature_rms": float(np.sqrt((feats.txt["fit"][feats.mask["fit"]] ** 2).mean())),
    }
