"""What the jobs call: train one variant (and cache its weights), retrieve digits for a typed caption."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from methods.m3_jepa.config import VARIANTS
from methods.m3_jepa.data import ENCODER_VERSION, split
from methods.m3_jepa.textenc import FEATURE_VERSION

log = logging.getLogger(__name__)


def variant_config(variant: str, seed: int, epochs: int, patience: int = 10):
    from methods.m3_jepa.train import TrainConfig

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    return replace(TrainConfig(), seed=seed, epochs=epochs, patience=patience, **VARIANTS[variant][0])


def _checkpoint(cfg: Any) -> Path:
    from core.config import get_settings
    from core.llm import model_hash

    basis = json.dumps(
        {"cfg": asdict(cfg), "enc": ENCODER_VERSION, "txt": FEATURE_VERSION, "llm": model_hash()}, sort_keys=True
    )
    digest = hashlib.sha256(basis.encode()).hexdigest()[:16]
    return Path(get_settings().cache_dir) / "m3_jepa" / "models" / f"{digest}.pt"


def train_variant(
    variant: str,
    seed: int,
    epochs: int,
    patience: int = 10,
    *,
    progress: Any = None,
    device: Any = "cpu",
    amp: str = "off",
) -> dict[str, Any]:
    """Train + evaluate one (variant, seed) on ``device``; saves the weights for the retrieval demo; returns the JSON result.

    The weights are cached under a key of the config alone (not the device): a model trained on a GPU
    serves the demo on the CPU and vice versa.
    """
    from methods.m3_jepa.features import encoder_digest, load_features
    from methods.m3_jepa.train import run

    sub = progress.sub(0.0, 0.1) if progress is not None else None
    feats = load_features(progress=sub)
    before = encoder_digest()
    cfg = variant_config(variant, seed, epochs, patience)
    result, model = run(
        cfg, feats, progress=progress.sub(0.1, 1.0) if progress is not None else None, device=device, amp=amp
    )
    result["variant"] = variant
    result["encoder_unchanged"] = encoder_digest() == before
    path = _checkpoint(cfg)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save({"state": state, "config": asdict(cfg), "metrics": result["metrics"]}, tmp)
    tmp.replace(path)
    return result


def load_or_train(
    variant: str, seed: int, epochs: int, progress: Any = None, *, device: Any = "cpu", amp: str = "off"
) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The cached trained model of (variant, seed, epochs) on ``device``, training it first (there) when absent."""
    from core.device import resolve_device
    from methods.m3_jepa.features import load_features
    from methods.m3_jepa.train import build_model

    cfg = variant_config(variant, seed, epochs)
    path = _checkpoint(cfg)
    if not path.exists():
        train_variant(variant, seed, epochs, progress=progress, device=device, amp=amp)
    blob = torch.load(path, map_location="cpu", weights_only=False)
    model = build_model(cfg, load_features())
    model.load_state_dict(blob["state"])
    model.to(resolve_device(device)).eval()
    return model, blob["metrics"]


def retrieve(
    caption: str,
    k: int,
    variant: str,
    seed: int,
    epochs: int,
    progress: Any = None,
    *,
    device: Any = "cpu",
    amp: str = "off",
) -> dict[str, Any]:
    """Nearest test digits to ``caption`` (t→i: the caption's predicted image latent vs the image keys), on ``device``.

    The model of (variant, seed, epochs) is trained first when it is not cached (with gradients: only the
    look-up runs without them).
    """
    model, metrics = load_or_train(
        variant, seed, epochs, progress=progress.sub(0.0, 0.8) if progress else None, device=device, amp=amp
    )
    return _nearest(model, metrics, caption, k, variant, seed, progress)


@torch.no_grad()
def _nearest(model: torch.nn.Module, metrics: dict[str, Any], caption: str, k: int, variant: str, seed: int,
             progress: Any) -> dict[str, Any]:  # fmt: skip
    from methods.m3_jepa.evaluate import cosine
    from methods.m3_jepa.features import load_features, normalise_tokens
    from methods.m3_jepa.model import M3Predictor
    from methods.m3_jepa.textenc import cached_features, pad, token_strings

    dev = next(model.parameters()).device
    feats = load_features()
    arr = normalise_tokens(cached_features([caption])[caption])
    txt, mask = (t.to(dev) for t in pad([arr]))
    test = split()["test"]
    img = feats.img["test"].to(dev)
    if isinstance(model, M3Predictor):
        out = model("t2i", txt, mask, return_weights=True)
        keys = model.target_cl("image", img)
        q = out.cl
        routing = {b: w[0].cpu().tolist() for b, w in (out.weights or {}).items()}
    else:
        q, keys, routing = model.embed("text", txt, mask), model.embed("image", img), {}
    sims = cosine(q, keys)[0].cpu()
    top = torch.topk(sims, k).indices.tolist()
    hits = [
        {
            "rank": r + 1,
            "test_index": int(i),
            "label": int(test.labels[i]),
            "ink": int(test.ink[i]),
            "slant": int(test.slant[i]),
            "caption": test.captions[i],
            "similarity": float(sims[i]),
        }
        for r, i in enumerate(top)
    ]
    if progress:
        progress(1.0, f"{k} nearest digits")
    return {
        "caption": caption,
        "variant": variant,
        "seed": seed,
        "hits": hits,
        "images": np.stack([test.images[h["test_index"]] for h in hits]),
        "tokens": token_strings([caption])[0],
        "routing": routing,
        "model_metrics": metrics,
    }
