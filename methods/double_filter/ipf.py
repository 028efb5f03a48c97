"""IPF — the image patch filter (spec §3.1): foreground/background split, then importance-ranked keep of both.

1. A detector gives boxes (:class:`Detector`: ``detect(image) -> boxes``; YOLO with local weights plugs in
   here). Patch p is foreground when a box covers ≥ τ_ov of its area; no box ⇒ every patch background.
2. Importance a_p: the [CLS]→patch attention of a ViT (here the frozen pretrained VLP's first vision
   block(s), :meth:`~methods.double_filter.model.DoubleFilterVLP.cls_attention`), Σ_p a_p = 1.
3. Keep k = round(ρ·N): the top round(r_fg·|F|) foreground patches by a_p and the top k − k_fg background
   patches by a_p (at least one background patch whenever any exists and k ≥ 2: background context is
   kept on purpose); if one side runs short the other fills the budget. Indices come back sorted.

Baselines for spec §7.5: :func:`random_keep` (random patches) and ``r_fg = 1, fg_only=True`` (foreground
only: background patches are used only when there are fewer than k foreground ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import torch

# Per pixel: the background estimate, the colour distance and threshold, and the labelling pass.
CC_FLOPS_PER_PIXEL = 20


class Detector(Protocol):
    """A foreground detector: (3, H, W) image in [0, 1] → (k, 4) boxes x0, y0, x1, y1 in pixels."""

    name: str
    flops_per_image: float

    def detect(self, image: np.ndarray) -> np.ndarray: ...


class BoxesDetector:
    """The renderer's ground-truth boxes (an oracle detector; zero FLOPs)."""

    name = "renderer boxes"
    flops_per_image = 0.0

    def __init__(self, boxes: Sequence[np.ndarray]):
        self._boxes = list(boxes)
        self._next = 0

    def for_index(self, i: int) -> np.ndarray:
        return np.asarray(self._boxes[i], dtype=np.float32).reshape(-1, 4)

    def detect(self, image: np.ndarray) -> np.ndarray:  # sequential use
        out = self.for_index(self._next)
        self._next += 1
        return out


class ComponentsDetector:
    """Connected components of pixels that differ from the background colour (the border's median).

    A pixel is foreground when its colour is farther than ``threshold`` (Euclidean, in [0, 1] RGB) from
    the median colour of the image border; each 8-connected component of at least ``min_pixels`` pixels
    becomes one box. No learned weights; cost ≈ :data:`CC_FLOPS_PER_PIXEL` per pixel.
    """

    name = "connected components"

    def __init__(self, threshold: float = 0.2, min_pixels: int = 6, image_size: int = 32):
        self.threshold, self.min_pixels = threshold, min_pixels
        self.flops_per_image = float(CC_FLOPS_PER_PIXEL * image_size * image_size)

    def detect(self, image: np.ndarray) -> np.ndarray:
        from scipy import ndimage

        img = np.asarray(image, dtype=np.float32)
        hwc = img.transpose(1, 2, 0) if img.shape[0] == 3 else img
        border = np.concatenate([hwc[0], hwc[-1], hwc[:, 0], hwc[:, -1]])
        bg = np.median(border, axis=0)
        fg = np.linalg.norm(hwc - bg, axis=-1) > self.threshold
        labels, n = ndimage.label(fg, structure=np.ones((3, 3)))
        boxes = []
        for sl in ndimage.find_objects(labels):
            if sl is None:
                continue
            ys, xs = sl
            if (labels[sl] > 0).sum() >= self.min_pixels:
                boxes.append([xs.start, ys.start, xs.stop, ys.stop])
        return np.asarray(boxes, dtype=np.float32).reshape(-1, 4)


def foreground_patches(boxes: np.ndarray, image_size: int, patch: int, tau: float = 0.5) -> np.ndarray:
    """(N,) bool: patch p (row-major) is foreground when the union of ``boxes`` covers ≥ ``tau`` of its area."""
    cover = np.zeros((image_size, image_size), dtype=bool)
    for x0, y0, x1, y1 in np.asarray(boxes).reshape(-1, 4):
        cover[max(0, int(np.floor(y0))) : int(np.ceil(y1)), max(0, int(np.floor(x0))) : int(np.ceil(x1))] = True
    g = image_size // patch
    frac = cover.reshape(g, patch, g, patch).mean(axis=(1, 3))
    return (frac >= tau).reshape(-1)


def keep_count(rho: float, n: int) -> int:
    return max(1, min(n, int(round(rho * n))))


def select(
    importance: np.ndarray, fg: np.ndarray, rho: float, r_fg: float = 0.8, *, fg_only: bool = False
) -> np.ndarray:
    """The kept patch indices (sorted, unique, exactly round(ρ·N)) of one image (spec §3.1 step 3)."""
    importance = np.asarray(importance, dtype=np.float64)
    fg = np.asarray(fg, dtype=bool)
    n = len(importance)
    k = keep_count(rho, n)
    f_idx, b_idx = np.flatnonzero(fg), np.flatnonzero(~fg)
    f_idx = f_idx[np.argsort(-importance[f_idx], kind="stable")]
    b_idx = b_idx[np.argsort(-importance[b_idx], kind="stable")]
    if fg_only:
        k_fg = min(len(f_idx), k)
    else:
        k_fg = min(len(f_idx), int(round(r_fg * len(f_idx))), k)
        if len(b_idx) and k >= 2:
            k_fg = min(k_fg, k - 1)  # at least one background patch
    k_bg = min(len(b_idx), k - k_fg)
    k_fg = k - k_bg  # background ran short: foreground fills the budget
    return np.sort(np.concatenate([f_idx[:k_fg], b_idx[:k_bg]])).astype(np.int64)


def random_keep(n_images: int, n: int, rho: float, seed: int) -> torch.Tensor:
    """(n_images, k) random sorted patch indices (the random-dropping baseline)."""
    rng = np.random.default_rng(seed)
    k = keep_count(rho, n)
    return torch.from_numpy(np.stack([np.sort(rng.choice(n, k, replace=False)) for _ in range(n_images)]))


def ipf_keep(
    model,
    images: torch.Tensor,
    boxes: Sequence[np.ndarray],
    rho: float,
    *,
    r_fg: float = 0.8,
    tau: float = 0.5,
    score_layers: int = 1,
    fg_only: bool = False,
    batch: int = 256,
) -> tuple[torch.Tensor, np.ndarray]:
    """(n, k) kept indices for every image and the (n, N) foreground masks; ``model`` scores importance.

    The scorer runs on ``model``'s device (``images`` are moved there in batches); the indices come back on the CPU.
    """
    cfg = model.cfg
    dev = next(model.parameters()).device
    fgs = np.stack([foreground_patches(b, cfg.image_size, cfg.patch_size, tau) for b in boxes])
    imps = torch.cat(
        [model.cls_attention(images[i : i + batch].to(dev), score_layers).cpu() for i in range(0, len(images), batch)]
    )
    keep = np.stack([select(a, f, rho, r_fg, fg_only=fg_only) for a, f in zip(imps.numpy(), fgs, strict=True)])
    return torch.from_numpy(keep), fgs


def detect_all(detector, images: torch.Tensor, gt_boxes: Sequence[np.ndarray] | None) -> list[np.ndarray]:
    """Boxes of every image: the renderer's (``detector="boxes"``) or the detector's."""
    if isinstance(detector, BoxesDetector) or detector is None:
        if gt_boxes is None:
            raise ValueError("the renderer-boxes detector needs the dataset's boxes")
        return [np.asarray(b, dtype=np.float32).reshape(-1, 4) for b in gt_boxes]
    return [detector.detect(img) for img in images.cpu().numpy()]


def make_detector(name: str, image_size: int = 32):
    """``components`` (connected components) or ``boxes`` (the renderer's ground truth)."""
    if name == "components":
        return ComponentsDetector(image_size=image_size)
    if name == "boxes":
        return BoxesDetector([])
    raise ValueError(f"unknown detector {name!r}; use 'components' or 'boxes'")
