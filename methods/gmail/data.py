"""Real/generated pairs with identical semantics and a controllable modality gap (spec gmail.md §5).

"Real" images are the substrate's procedural renders (:mod:`methods.vlm.render`). The "generator"
is the spec's artifact-style renderer: from the real scene's caption (shape, colour, texture, count,
background and, for one object, its position cell) it draws a *new* scene that fits the same caption
(objects resampled, same 3×3 position cell), renders it with the same procedural renderer and adds
systematic generator-like artifacts whose amplitude is ``strength``:

* blur — Gaussian, σ = 0.8·s px;
* colour cast — per-channel gain (1 + s·(0.18, −0.05, −0.15)) and offset s·(0.05, 0.02, −0.03);
* high-frequency checkerboard — ±0.10·s at a 2-px period (a decoder's upsampling artifact);
* texture noise — N(0, (0.05·s)²) per pixel and channel.

The same seeds give the same scenes at every strength, so the strength changes only the gap.
Clean pairs are cached under ``<cache_dir>/gmail/pairs``; artifacts are applied on load.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from methods.vlm.render import (
    BACKGROUNDS,
    COLOURS,
    SHAPES,
    Scene,
    captions,
    position_name,
    render,
    sample_scene,
)

log = logging.getLogger(__name__)

SPLIT_SALT = {"train": 7100, "test": 7200}
CACHE_VERSION = 1
CAST_GAIN = (0.18, -0.05, -0.15)
CAST_OFFSET = (0.05, 0.02, -0.03)
ATTRIBUTES = ("shape", "colour", "background", "count")


@dataclass
class PairSet:
    """``real[i]`` and ``clean_gen[i]`` share ``captions[i]``; ``gen`` adds the artifacts."""

    split: str
    real: torch.Tensor  # (n, 3, 32, 32) in [0, 1]
    clean_gen: torch.Tensor  # the generator's re-render before artifacts
    captions: list[list[str]]  # every true caption of the pair's scene
    attributes: dict[str, torch.Tensor]  # shape / colour / background / count label ids
    strength: float = 0.0
    gen: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.real)

    def specific_captions(self) -> list[str]:
        """The most specific caption per pair (attributes, position for one object, background)."""
        return [c[5] if len(c) > 5 else c[3] for c in self.captions]


def reimagine(scene: Scene, rng: np.random.Generator, *, tries: int = 200) -> Scene:
    """A new scene with the same caption: same kind, count and background; a single object stays in its cell."""
    n = len(scene.objects)
    for _ in range(tries):
        new = sample_scene(rng, size=scene.size, kind=scene.kind, count=n, noise=scene.noise)
        if n > 1 or position_name(new.objects[0], new.size) == position_name(scene.objects[0], scene.size):
            return dataclasses.replace(new, background=scene.background)
    log.warning("no resample in the same position cell after %d tries; keeping the layout", tries)
    return dataclasses.replace(scene, seed=int(rng.integers(2**31)))


def gaussian_blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """Depthwise Gaussian blur of (n, 3, H, W) with a 5×5 kernel (reflect padding)."""
    if sigma <= 0:
        return x
    r = torch.arange(-2, 3, dtype=torch.float32)
    k = torch.exp(-(r**2) / (2 * sigma**2))
    k = k / k.sum()
    kernel = (k[:, None] * k[None, :]).expand(3, 1, 5, 5).contiguous()
    return F.conv2d(F.pad(x, (2, 2, 2, 2), mode="reflect"), kernel, groups=3)


def add_artifacts(clean: torch.Tensor, strength: float, *, seed: int = 0) -> torch.Tensor:
    """The generator artifacts at ``strength`` on (n, 3, H, W) images in [0, 1] (identity at 0)."""
    if strength < 0:
        raise ValueError(f"strength must be >= 0, got {strength}")
    if strength == 0:
        return clean.clone()
    s = float(strength)
    x = gaussian_blur(clean.float(), 0.8 * s)
    gain = 1 + s * torch.tensor(CAST_GAIN).view(1, 3, 1, 1)
    x = x * gain + s * torch.tensor(CAST_OFFSET).view(1, 3, 1, 1)
    h, w = x.shape[-2:]
    checker = ((torch.arange(h)[:, None] + torch.arange(w)[None, :]) % 2).float() * 2 - 1
    x = x + 0.10 * s * checker
    g = torch.Generator().manual_seed(10_007 + seed)
    x = x + 0.05 * s * torch.randn(x.shape, generator=g)
    return x.clamp(0, 1)


def _attribute_ids(scene: Scene) -> tuple[int, int, int, int]:
    shape, colour, _ = scene.kind
    return (SHAPES.index(shape), list(COLOURS).index(colour), list(BACKGROUNDS).index(scene.background),
            len(scene.objects) - 1)  # fmt: skip


def render_pairs(split: str, n: int, start: int = 0) -> PairSet:
    """``n`` clean real/generated pairs of ``split`` from index ``start`` (pair i depends only on the split and i)."""
    if split not in SPLIT_SALT:
        raise ValueError(f"split must be one of {tuple(SPLIT_SALT)}, got {split!r}")
    real, gen, caps, attrs = [], [], [], []
    for i in range(start, start + n):
        scene = sample_scene(np.random.default_rng([SPLIT_SALT[split], i]))
        twin = reimagine(scene, np.random.default_rng([SPLIT_SALT[split] + 1, i]))
        real.append(render(scene)[0])
        gen.append(render(twin)[0])
        caps.append(captions(scene))
        attrs.append(_attribute_ids(scene))
    to_t = lambda xs: torch.from_numpy(np.stack(xs)).permute(0, 3, 1, 2).contiguous()  # noqa: E731
    a = torch.tensor(attrs, dtype=torch.long)
    return PairSet(split, to_t(real), to_t(gen), caps, {k: a[:, j] for j, k in enumerate(ATTRIBUTES)})


def _cache_file(split: str, n: int) -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "gmail" / "pairs" / f"{split}-{n}-v{CACHE_VERSION}.pt"


def load_pairs(split: str, n: int, strength: float, *, generator: str = "artifact") -> PairSet:
    """The clean pairs (cached on disk) with the generator's artifacts at ``strength`` applied."""
    if generator != "artifact":
        raise ValueError(f"unknown generator {generator!r}; available: artifact")
    path = _cache_file(split, n)
    if path.is_file():
        pairs = PairSet(**torch.load(path, weights_only=False))
    else:
        pairs = render_pairs(split, n)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        torch.save({f.name: getattr(pairs, f.name) for f in dataclasses.fields(pairs)}, tmp)
        tmp.replace(path)
    pairs.strength = float(strength)
    pairs.gen = add_artifacts(pairs.clean_gen, strength, seed=SPLIT_SALT[split])
    return pairs


def pairs_png(split: str, start: int, count: int, strengths: tuple[float, ...], *, scale: int = 3) -> bytes:
    """A PNG: one column per pair, the real render on top and the generator's image at each strength below."""
    import io

    from PIL import Image

    pairs = render_pairs(split, count, start)
    rows = [pairs.real] + [add_artifacts(pairs.clean_gen, s, seed=SPLIT_SALT[split] + start) for s in strengths]
    side = pairs.real.shape[-1] * scale
    canvas = Image.new("RGB", (count * (side + 2), len(rows) * (side + 2)), (255, 255, 255))
    for r, imgs in enumerate(rows):
        for c in range(count):
            arr = (imgs[c].permute(1, 2, 0).clamp(0, 1).numpy() * 255).astype(np.uint8)
            canvas.paste(Image.fromarray(arr).resize((side, side), Image.NEAREST), (c * (side + 2), r * (side + 2)))
    buf = io.BytesIO()
    canvas.save(buf, format="PNG")
    return buf.getvalue()
