"""Figures of a run: the graph with each node's answer (Graphviz DOT for the UI, matplotlib for reports) and the
slice-triple montage."""

from __future__ import annotations

import io
from typing import Any

from agents.clinical_got.nodes import NODE_TITLES
from methods.clinical_got.bench import PreparedCase

EDGES = [("n1", "n3"), ("n2", "n3"), ("n1", "n4"), ("n2", "n4"), ("n3", "n4"), ("n2", "n2_5")]
EDGES += [("n1", "n5"), ("n2", "n5"), ("n2_5", "n5"), ("n3", "n5")]
POS = {"n1": (0, 2), "n2": (0, 0), "n2_5": (1, -0.9), "n3": (1, 1), "n4": (2.1, 1.9), "n5": (2.1, -0.3)}


def graph_dot(row: dict[str, Any], mode: str = "cgot") -> str:
    """The DAG as Graphviz DOT, each node labelled with its answer (the UI draws it)."""
    lines = ["digraph cgot {", "rankdir=LR; node [shape=box, style=rounded, fontsize=10];"]
    for n, title in NODE_TITLES.items():
        a = (row.get("answers", {}).get(n) or {}).get("answer", "")
        a = (a[:90] + "…") if len(a) > 90 else a
        label = f"{title}\\n{a}".replace('"', "'")
        lines.append(f'{n} [label="{label}"];')
    edges = EDGES if mode == "cgot" else [(a, b) for a, b in EDGES if b in ("n5", "n2_5")]
    lines += [f"{a} -> {b};" for a, b in edges]
    lines.append("}")
    return "\n".join(lines)


def graph_figure(row: dict[str, Any], mode: str = "cgot"):
    """The DAG drawn with matplotlib, each node with its answer (for reports)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_axis_off()
    edges = EDGES if mode == "cgot" else [(a, b) for a, b in EDGES if b in ("n5", "n2_5")]
    boxes = {}
    for n, (x, y) in POS.items():
        rec = row.get("answers", {}).get(n) or {}
        ans = rec.get("answer", "")
        ans = ans if len(ans) < 60 else ans[:57] + "…"
        colour = {"oracle": "#fde2b0", "derived": "#e0e0e0", "template": "#e0e0e0"}.get(rec.get("source"), "#cfe3fb")
        boxes[n] = ax.text(
            x,
            y,
            f"{NODE_TITLES[n]}\n{ans}",
            ha="center",
            va="center",
            fontsize=7.5,
            bbox=dict(boxstyle="round", fc=colour, ec="#555555"),
            zorder=3,
        )
    fig.canvas.draw()  # box sizes are known after a draw; arrows are clipped at the boxes
    for a, b in edges:
        rad = 0.25 if (a, b) in (("n2", "n4"), ("n1", "n5")) else 0.0
        ax.annotate(
            "",
            xy=POS[b],
            xytext=POS[a],
            arrowprops=dict(
                arrowstyle="->",
                lw=1.1,
                shrinkA=1,
                shrinkB=1,
                color="#555555",
                patchA=boxes[a].get_bbox_patch(),
                patchB=boxes[b].get_bbox_patch(),
                connectionstyle=f"arc3,rad={rad}",
                mutation_scale=14,
            ),
            zorder=4,
        )
    ax.set_xlim(-0.6, 2.8)
    ax.set_ylim(-1.4, 2.5)
    return fig


def triples_figure(case: PreparedCase, max_slices: int = 5):
    """A montage of the slice triples (ADC / Z-map / ROI) the model sees."""
    from matplotlib.figure import Figure
    from PIL import Image

    picks = case.triples[:: max(1, len(case.triples) // max_slices)][:max_slices]
    fig = Figure(figsize=(2.2 * len(picks), 6.6))
    for j, t in enumerate(picks):
        for i, kind in enumerate(("adc", "zmap", "roi")):
            ax = fig.add_subplot(3, len(picks), i * len(picks) + j + 1)
            with Image.open(t[kind]) as im:
                arr = im.convert("RGB")
                ax.imshow(arr.crop((0, 0, arr.height, arr.height)))
            ax.set_title(
                {"adc": "Slice", "zmap": "ZMAP Slice", "roi": "ROI Slice"}[kind] + f" {t['slice']}", fontsize=8
            )
            ax.set_axis_off()
    return fig


def png_bytes(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()
