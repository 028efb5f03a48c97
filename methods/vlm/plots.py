"""Pictures for VLM reports: a dataset grid with boxes and captions, loss curves, probability bars."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402


def dataset_grid(dataset, indices: Sequence[int], *, cols: int = 6, captions: bool = True):
    """Images of ``dataset`` at ``indices`` with their ground-truth boxes and first caption."""
    rows = -(-len(indices) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.1 * cols, 2.4 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, i in zip(axes.ravel(), indices, strict=False):
        ax.imshow(dataset.images[i].permute(1, 2, 0).numpy(), interpolation="nearest")
        if dataset.boxes is not None:
            for x0, y0, x1, y1 in dataset.boxes[i]:
                ax.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, ec="lime", lw=1))
        label = dataset.classnames[int(dataset.labels[i])] if dataset.classnames else ""
        text = dataset.captions[i][1 if len(dataset.captions[i]) > 1 else 0] if captions else label
        ax.set_title(_wrap(text), fontsize=6.5)
    fig.tight_layout()
    return fig


def _wrap(text: str, width: int = 28) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "\n".join([*lines, line])


def loss_curve(losses: Sequence[float], *, title: str = "contrastive loss"):
    ys = np.asarray(losses, dtype=float)
    k = max(1, len(ys) // 50)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(ys, alpha=0.3, lw=0.8, label="step")
    ax.plot(np.arange(k - 1, len(ys)), np.convolve(ys, np.ones(k) / k, mode="valid"), label=f"mean of {k}")
    ax.set_xlabel("step")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def probability_bars(classnames: Sequence[str], probs: Sequence[float], *, top: int = 10):
    order = np.argsort(-np.asarray(probs))[:top][::-1]
    fig, ax = plt.subplots(figsize=(4.5, 0.3 * len(order) + 0.8))
    ax.barh([classnames[i] for i in order], [probs[i] for i in order], color="#4c72b0")
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability")
    fig.tight_layout()
    return fig


def grid_png(dataset, start: int, count: int, *, cols: int = 8, scale: int = 3) -> bytes:
    """A PNG tiling ``count`` images from ``start`` (nearest-neighbour ×``scale``), boxes drawn in green."""
    import io

    from PIL import Image, ImageDraw

    idx = list(range(start, min(start + count, len(dataset))))
    if not idx:
        raise ValueError(f"start {start} is past the end ({len(dataset)} images)")
    side = dataset.images.shape[-1] * scale
    rows = -(-len(idx) // cols)
    canvas = Image.new("RGB", (cols * (side + 2), rows * (side + 2)), (255, 255, 255))
    draw = ImageDraw.Draw(canvas)
    for k, i in enumerate(idx):
        arr = (dataset.images[i].permute(1, 2, 0).clamp(0, 1).numpy() * 255).astype(np.uint8)
        tile = Image.fromarray(arr).resize((side, side), Image.NEAREST)
        x, y = (k % cols) * (side + 2), (k // cols) * (side + 2)
        canvas.paste(tile, (x, y))
        if dataset.boxes is not None:
            for x0, y0, x1, y1 in dataset.boxes[i]:
                draw.rectangle(
                    [x + x0 * scale, y + y0 * scale, x + x1 * scale - 1, y + y1 * scale - 1], outline=(0, 255, 0)
                )
    buf = io.BytesIO()
    canvas.save(buf, format="PNG")
    return buf.getvalue()
