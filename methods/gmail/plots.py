"""Pictures for GMAIL reports: the real-vs-generated embedding map, example pairs, curves over strength."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from methods.gmail.evaluate import pca_2d  # noqa: E402

PANELS = (
    ("naive", "without alignment: generated through f_r"),
    ("dual-noalign", "dual encoder, no L_align"),
    ("gmail", "GMAIL: generated through aligned f_g"),
)
COLOURS = {"zero-shot": "#7f7f7f", "real-only": "#2ca02c", "naive": "#d62728", "dual-noalign": "#ff7f0e",
           "gmail": "#1f77b4"}  # fmt: skip


def embedding_coords(emb: dict[str, torch.Tensor], n: int = 1000) -> dict[str, dict[str, list[list[float]]]]:
    """Per panel, 2-D PCA coordinates of ≤ ``n`` real and their paired generated embeddings."""
    out = {}
    for arm, _ in PANELS:
        if arm in emb:
            r, g = pca_2d(emb["real"][:n], emb[arm][:n])
            out[arm] = {"real": np.round(r, 4).tolist(), "generated": np.round(g, 4).tolist()}
    return out


def embedding_map(coords: dict, gap: dict | None = None):
    """Scatter of real vs generated embeddings (PCA), one panel per encoder of the generated images."""
    panels = [(a, t) for a, t in PANELS if a in coords]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.0), squeeze=False)
    for ax, (arm, title) in zip(axes[0], panels, strict=True):
        r, g = np.asarray(coords[arm]["real"]), np.asarray(coords[arm]["generated"])
        ax.scatter(r[:, 0], r[:, 1], s=4, alpha=0.5, c="#2ca02c", label="real (f_r)")
        ax.scatter(g[:, 0], g[:, 1], s=4, alpha=0.5, c="#d62728", label="generated")
        extra = ""
        if gap and arm in gap:
            extra = (f"\ncos {gap[arm]['paired_cosine']:.2f}, probe acc {gap[arm]['separability']:.2f} (64-d), "
                     f"{gap[arm]['plane_separability']:.2f} (plane)")  # fmt: skip
        ax.set_title(title + extra, fontsize=8.5)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0][0].legend(fontsize=7, markerscale=3)
    fig.suptitle(f"{len(r)} held-out pairs, PCA of the 2 embeddings' union", fontsize=9)
    fig.tight_layout()
    return fig


def pair_grid(real: torch.Tensor, gens: Sequence[tuple[str, torch.Tensor]], captions: Sequence[str], k: int = 6):
    """Rows: the real render and the generator's image at each strength, for ``k`` pairs."""
    rows = [("real", real), *gens]
    fig, axes = plt.subplots(len(rows), k, figsize=(1.6 * k, 1.75 * len(rows)), squeeze=False)
    for r, (label, imgs) in enumerate(rows):
        for c in range(k):
            ax = axes[r][c]
            ax.imshow(imgs[c].permute(1, 2, 0).clamp(0, 1).numpy(), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(label, fontsize=7)
            if r == 0:
                ax.set_title(_short(captions[c]), fontsize=5.5)
    fig.tight_layout()
    return fig


def _short(text: str, width: int = 26) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "\n".join([*lines, line])


def curves_over_strength(strengths: Sequence[float], series: dict[str, dict[str, tuple[list, list]]]):
    """One panel per metric: mean ± std over seeds against the artifact strength, one line per arm."""
    fig, axes = plt.subplots(1, len(series), figsize=(4.0 * len(series), 3.3), squeeze=False)
    for ax, (metric, arms) in zip(axes[0], series.items(), strict=True):
        for arm, (mean, std) in arms.items():
            ax.errorbar(strengths, mean, yerr=std, marker="o", ms=3, capsize=2, label=arm, color=COLOURS.get(arm))
        ax.set_xlabel("artifact strength")
        ax.set_title(metric, fontsize=9)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def loss_curves(curves: dict[str, Sequence[float]], title: str = "training losses"):
    fig, ax = plt.subplots(figsize=(5, 3))
    for name, ys in curves.items():
        if len(ys):
            ax.plot(ys, lw=0.9, label=name)
    ax.set_xlabel("step")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
