"""Clean backgrounds, the synthetic rain generator and the Rain100L sample (spec fourier_mamba §5).

Rain13K (the paper's training set) is not obtainable here, so training pairs are made by
adding synthetic rain to real clean photos: scikit-learn's ``china.jpg`` and ``flower.jpg``
and the 3 Rain100L ground-truth images. The generator (§5):

1. sparse noise field, density ρ ~ U(0.002, 0.02);
2. convolved with a line kernel of length ℓ ~ U(10, 40) px at angle θ ~ U(−30°, 30°) (motion blur);
3. light Gaussian blur (σ = 0.6 px);
4. scaled to intensity ~ U(0.3, 0.9) (the layer's maximum);
5. I = clip(B + R). Light rain ("L") is one layer; heavy rain ("H") is three layers plus haze
   (1 − α)·B + α·0.8 with α ~ U(0.1, 0.3).

Every image gets its own seeded generator, so a split is reproducible. Held-out crops come from
the right quarter of each image, training crops from the left three quarters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter
from scipy.signal import fftconvolve

RainKind = Literal["L", "H"]
RAIN100L = "rain100l_sample"
TRAIN_FRACTION = 0.75  # columns [0, 0.75·W) train, the rest held out


def load_rgb(path: Path | str) -> np.ndarray:
    """An RGB image as float32 (H, W, 3) in [0, 1]."""
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0


def sklearn_backgrounds() -> dict[str, np.ndarray]:
    """scikit-learn's two sample photos (427×640), shipped in the package."""
    from sklearn.datasets import load_sample_image

    return {name: load_sample_image(f"{name}.jpg").astype(np.float32) / 255.0 for name in ("china", "flower")}


def rain100l_pairs(data_dir: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The real Rain100L test pairs ``(name, rainy, clean)`` in ``<data_dir>/rain100l_sample`` (empty if absent)."""
    folder = Path(data_dir) / RAIN100L
    out = []
    for clean_path in sorted((folder / "target").glob("*.png")):
        rainy_path = folder / "input" / clean_path.name
        if rainy_path.is_file():
            out.append((clean_path.stem, load_rgb(rainy_path), load_rgb(clean_path)))
    return out


def clean_backgrounds(data_dir: Path | None, *, rain100l_targets: bool = True) -> dict[str, np.ndarray]:
    """china, flower and (when present and wanted) the Rain100L targets as ``rain100l_<k>``."""
    images = sklearn_backgrounds()
    if rain100l_targets and data_dir is not None:
        for name, _, clean in rain100l_pairs(data_dir):
            images[f"rain100l_{name}"] = clean
    return images


def line_kernel(length: int, angle_deg: float) -> np.ndarray:
    """A normalised anti-aliased line of ``length`` px through the centre at ``angle_deg`` (0 = vertical)."""
    size = length + 2 - length % 2 + 1
    k = np.zeros((size, size), dtype=np.float64)
    c = size // 2
    theta = math.radians(angle_deg)
    dy, dx = math.cos(theta), math.sin(theta)
    for t in np.linspace(-(length - 1) / 2, (length - 1) / 2, 4 * length):
        y, x = c + t * dy, c + t * dx
        y0, x0 = int(math.floor(y)), int(math.floor(x))
        fy, fx = y - y0, x - x0
        for yy, xx, wgt in ((y0, x0, (1 - fy) * (1 - fx)), (y0 + 1, x0, fy * (1 - fx)), (y0, x0 + 1, (1 - fy) * fx)):
            k[yy, xx] += wgt
        k[y0 + 1, x0 + 1] += fy * fx
    return k / k.sum()


def rain_layer(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """One streak layer (H, W) in [0, intensity] (steps 1–4 of the generator)."""
    h, w = shape
    density = rng.uniform(0.002, 0.02)
    length = int(rng.integers(10, 41))
    angle = rng.uniform(-30.0, 30.0)
    intensity = rng.uniform(0.3, 0.9)
    noise = (rng.random((h, w)) < density).astype(np.float64) * rng.uniform(0.5, 1.0, (h, w))
    streaks = fftconvolve(noise, line_kernel(length, angle), mode="same")
    streaks = gaussian_filter(np.clip(streaks, 0.0, None), 0.6)
    peak = np.quantile(streaks, 0.999) if streaks.any() else 1.0
    return (np.clip(streaks / max(peak, 1e-8), 0.0, 1.0) * intensity).astype(np.float32)


def add_rain(clean: np.ndarray, rng: np.random.Generator, kind: RainKind = "L") -> np.ndarray:
    """Rainy version of a clean (H, W, 3) image in [0, 1] (step 5)."""
    if kind == "L":
        return np.clip(clean + rain_layer(clean.shape[:2], rng)[..., None], 0.0, 1.0)
    if kind != "H":
        raise ValueError(f"rain kind must be 'L' or 'H', got {kind!r}")
    alpha = rng.uniform(0.1, 0.3)
    hazy = (1 - alpha) * clean + alpha * 0.8
    streaks = sum(rain_layer(clean.shape[:2], rng) for _ in range(3))
    return np.clip(hazy + streaks[..., None], 0.0, 1.0).astype(np.float32)


@dataclass
class RainSet:
    """Full-size (rainy, clean) images with a column split into training and held-out regions."""

    names: list[str]
    rainy: list[np.ndarray]
    clean: list[np.ndarray]

    def region(self, i: int, split: Literal["train", "heldout"]) -> tuple[np.ndarray, np.ndarray]:
        cut = int(self.clean[i].shape[1] * TRAIN_FRACTION)
        cols = slice(0, cut) if split == "train" else slice(cut, None)
        return self.rainy[i][:, cols], self.clean[i][:, cols]


def make_rain_set(backgrounds: dict[str, np.ndarray], *, variants: int, seed: int, kind: RainKind = "L") -> RainSet:
    """``variants`` rainy versions of every background, each from its own seeded generator."""
    names, rainy, clean = [], [], []
    for bi, (name, img) in enumerate(sorted(backgrounds.items())):
        for v in range(variants):
            rng = np.random.default_rng([seed, bi, v])
            names.append(f"{name}#{v}")
            rainy.append(add_rain(img, rng, kind))
            clean.append(img)
    return RainSet(names, rainy, clean)


def sample_crops(
    rs: RainSet, n: int, size: int, split: Literal["train", "heldout"], rng: np.random.Generator, flips: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random aligned crops (n, 3, size, size) float32 (rainy, clean), with random flips for training."""
    xs = np.empty((n, 3, size, size), np.float32)
    ys = np.empty_like(xs)
    for k in range(n):
        i = int(rng.integers(len(rs.names)))
        r, c = rs.region(i, split)
        top = int(rng.integers(0, r.shape[0] - size + 1))
        left = int(rng.integers(0, r.shape[1] - size + 1))
        pr, pc = r[top : top + size, left : left + size], c[top : top + size, left : left + size]
        if flips and rng.random() < 0.5:
            pr, pc = pr[:, ::-1], pc[:, ::-1]
        xs[k], ys[k] = pr.transpose(2, 0, 1), pc.transpose(2, 0, 1)
    return xs, ys
