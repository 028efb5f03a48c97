"""Images for the tiny RF model: scikit-learn digits (16×16) and crops of its sample photos.

Pixels are scaled to [−1, 1] (the data end X_0 of the flow, spec §3.1). Digits are the
8×8 set (values 0..16) upsampled ×2 by nearest neighbour, so each 2×2 patch token is one
original pixel. Photos are scikit-learn's ``china.jpg`` and ``flower.jpg`` downscaled ×2,
from which random 32×32 crops are drawn; the label is which photo a crop comes from.
Uploaded images are converted to the same format by :func:`image_to_tensor`.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image

DIGIT_MAX = 16.0


@dataclass
class DigitsSplit:
    """16×16 digits in [−1, 1] with labels, plus the raw 8×8 rows the scorer uses."""

    images: torch.Tensor  # (n, 1, 16, 16)
    labels: torch.Tensor  # (n,)
    raw: np.ndarray  # (n, 64) in 0..16


def digits_to_images(raw: np.ndarray) -> torch.Tensor:
    """(n, 64) 0..16 → (n, 1, 16, 16) in [−1, 1] (nearest ×2 upsampling)."""
    x = torch.as_tensor(raw, dtype=torch.float32).reshape(-1, 1, 8, 8) / DIGIT_MAX * 2 - 1
    return x.repeat_interleave(2, dim=2).repeat_interleave(2, dim=3)


def images_to_digits(x: torch.Tensor) -> np.ndarray:
    """(n, 1, 16, 16) in [−1, 1] → (n, 64) on the digits' 0..16 scale (2×2 average pool)."""
    x = torch.nn.functional.avg_pool2d(x.float().clamp(-1, 1), 2)
    return ((x + 1) / 2 * DIGIT_MAX).reshape(x.shape[0], 64).numpy()


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data.astype(np.float32), d.target.astype(np.int64)


def load_digits_split(split: str = "train", test_size: int = 297, seed: int = 0) -> DigitsSplit:
    """A fixed split of the 1,797 digits: ``test_size`` held out (never trained on)."""
    raw, y = _digits()
    perm = np.random.default_rng(seed).permutation(len(y))
    idx = perm[test_size:] if split == "train" else perm[:test_size]
    if split not in ("train", "test"):
        raise ValueError("split must be 'train' or 'test'")
    return DigitsSplit(digits_to_images(raw[idx]), torch.as_tensor(y[idx]), raw[idx])


PHOTO_NAMES = ("china.jpg", "flower.jpg")


@functools.lru_cache(maxsize=1)
def load_photos(downscale: int = 2) -> tuple[torch.Tensor, ...]:
    """scikit-learn's sample photos as (3, H, W) tensors in [−1, 1], downscaled ×``downscale``."""
    from sklearn.datasets import load_sample_image

    out = []
    for name in PHOTO_NAMES:
        img = Image.fromarray(load_sample_image(name))
        img = img.resize((img.width // downscale, img.height // downscale), Image.BILINEAR)
        arr = torch.as_tensor(np.array(img), dtype=torch.float32).permute(2, 0, 1) / 127.5 - 1
        out.append(arr)
    return tuple(out)


def photo_crops(
    n: int, size: int = 32, generator: torch.Generator | None = None, holdout: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """n random size×size crops and their photo label (0 china, 1 flower).

    Training crops come from the left 80% of each photo, ``holdout`` crops from the right 20%,
    so held-out reconstructions are of unseen pixels.
    """
    photos = load_photos()
    labels = torch.randint(0, len(photos), (n,), generator=generator)
    crops = []
    for lab in labels.tolist():
        p = photos[lab]
        _, h, w = p.shape
        split = int(w * 0.8)
        lo, hi = (split, w - size) if holdout else (0, split - size)
        x0 = int(torch.randint(lo, hi + 1, (1,), generator=generator))
        y0 = int(torch.randint(0, h - size + 1, (1,), generator=generator))
        crops.append(p[:, y0 : y0 + size, x0 : x0 + size])
    return torch.stack(crops), labels


def image_to_tensor(image: Image.Image | bytes | Path, size: int, channels: int) -> torch.Tensor:
    """An uploaded/opened image → (1, C, size, size) in [−1, 1] (centre crop, resize).

    For the 1-channel digits model the image is converted to grey and, when its
    background is light (mean > 0.5), inverted so strokes are bright like the digits set.
    """
    if isinstance(image, (bytes, bytearray)):
        image = Image.open(io.BytesIO(image))
    elif isinstance(image, Path):
        image = Image.open(image)
    image = image.convert("RGB")
    side = min(image.size)
    left, top = (image.width - side) // 2, (image.height - side) // 2
    image = image.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
    arr = torch.as_tensor(np.array(image), dtype=torch.float32) / 255.0  # (H, W, 3) in 0..1
    if channels == 1:
        grey = arr.mean(-1, keepdim=True)
        if float(grey.mean()) > 0.5:
            grey = 1.0 - grey
        arr = grey
    return (arr.permute(2, 0, 1) * 2 - 1)[None]


def tensor_to_uint8(x: torch.Tensor) -> np.ndarray:
    """(C, H, W) or (1, C, H, W) in [−1, 1] → (H, W) or (H, W, 3) uint8 for display."""
    if x.ndim == 4:
        x = x[0]
    arr = ((x.detach().float().clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(1, 2, 0).numpy()
    return arr[..., 0] if arr.shape[-1] == 1 else arr
