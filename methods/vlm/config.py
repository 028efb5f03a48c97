"""Tiny-CLIP architecture and training configs, and the named presets.

``default`` is the tiny CLIP the VLM methods share (a few minutes on one core; cached);
``test`` is a tinier one for the test suite (seconds). A preset's hash covers both configs,
so a changed preset trains a new model instead of loading stale weights.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace


@dataclass(frozen=True)
class TinyCLIPConfig:
    """A ViT image tower and a causal text tower (transformers ``CLIPConfig``), both tiny."""

    image_size: int = 32
    patch_size: int = 8
    vision_layers: int = 2
    vision_width: int = 64
    vision_heads: int = 4
    text_layers: int = 2
    text_width: int = 64
    text_heads: int = 4
    context_length: int = 32
    embed_dim: int = 64
    wordnet: bool = True  # the vocabulary also covers the WordNet word lists (when the data folder has them)
    word_vectors: str = "minilm"  # "minilm": frozen MiniLM-derived token embeddings; "random": trainable, random init


@dataclass(frozen=True)
class TrainConfig:
    """Contrastive (InfoNCE) training on captioned scenes + digits + photo crops."""

    steps: int = 1500
    batch_size: int = 128
    lr: float = 2e-3
    warmup: int = 100
    weight_decay: float = 0.05
    n_scenes: int = 12000
    mix: tuple[float, float, float] = (0.8, 0.12, 0.08)  # scenes, digits, photo crops
    seed: int = 0
    threads: int = 1


@dataclass(frozen=True)
class Preset:
    name: str
    model: TinyCLIPConfig = field(default_factory=TinyCLIPConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval_sets: tuple[tuple[str, str], ...] = (
        ("objects", "test"),
        ("objects20", "test"),
        ("scenes", "test"),
        ("digits", "test"),
        ("photos", "test"),
    )
    retrieval_n: int | None = None  # None: all 1000 test scenes

    def to_dict(self) -> dict:
        return {"name": self.name, "model": asdict(self.model), "train": asdict(self.train)}

    def hash(self) -> str:
        """Identity of the trained weights: both configs, except the thread count (it changes speed, not results)."""
        train = {k: v for k, v in asdict(self.train).items() if k != "threads"}
        blob = json.dumps({"model": asdict(self.model), "train": train}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


PRESETS: dict[str, Preset] = {
    "default": Preset("default"),
    "test": Preset(
        "test",
        TinyCLIPConfig(vision_layers=1, text_layers=1, vision_width=32, text_width=32, embed_dim=32, wordnet=False),
        TrainConfig(steps=30, batch_size=32, warmup=5, n_scenes=300, mix=(0.8, 0.2, 0.0)),
        eval_sets=(("digits", "test"),),
        retrieval_n=50,
    ),
}


def get_preset(name: str, **train_overrides) -> Preset:
    """The named preset, optionally with training fields overridden (which changes its hash)."""
    if name not in PRESETS:
        raise ValueError(f"unknown tiny-CLIP preset {name!r}; known: {', '.join(PRESETS)}")
    preset = PRESETS[name]
    return replace(preset, train=replace(preset.train, **train_overrides)) if train_overrides else preset
