"""Figures of the any4 reports (matplotlib ``Figure`` objects, no global pyplot state)."""

from __future__ import annotations

from matplotlib.figure import Figure

from methods.any4.grids import FP4_GRID, NF4_GRID


def perplexity_bars(suites: list[dict], eval_set: str = "wikitext2") -> Figure:
    """One panel per model: perplexity of every variant, one bar per group size, fp as a line."""
    fig = Figure(figsize=(6.5 * len(suites), 4.2))
    for i, suite in enumerate(suites):
        ax = fig.add_subplot(1, len(suites), i + 1)
        labels = list(dict.fromkeys(r["label"] for r in suite["rows"]))
        sizes = sorted({r["group_size"] for r in suite["rows"]}, reverse=True)
        width = 0.8 / len(sizes)
        for j, g in enumerate(sizes):
            vals = [
                next(
                    (r["ppl"][eval_set] for r in suite["rows"] if r["label"] == lab and r["group_size"] == g),
                    float("nan"),
                )
                for lab in labels
            ]
            ax.bar([x + (j - (len(sizes) - 1) / 2) * width for x in range(len(labels))], vals, width, label=f"g = {g}")
        ax.axhline(suite["fp_ppl"][eval_set], color="black", ls="--", lw=1, label="fp32")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel(f"{eval_set} perplexity (log)")
        ax.set_title(suite["model"], fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def lut_levels(example: dict) -> Figure:
    """The 16 levels one row's first group can take under each format, over the group's weights."""
    fig = Figure(figsize=(7.5, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    ax.hist(example["weights"], bins=40, color="0.8", label="row 0, group 0 weights")
    names = list(example["levels"])
    for i, name in enumerate(names):
        lv = example["levels"][name]["levels"]
        ax.plot(lv, [-(i + 1) * 0.6] * len(lv), "|", ms=14, mew=2, label=name)
    ax.set_yticks([])
    ax.set_xlabel("weight value")
    ax.set_title(f"levels available to {example['layer']} row {example['row']} (first group)", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def lut_vs_grids(levels: list[float], s: float, zero: float, absmax: float, lo: float) -> Figure:
    """A learned table (weight space) against int4 (min–max), nf4 and fp4 (absmax) for the same group."""
    fig = Figure(figsize=(7.5, 2.8))
    ax = fig.add_subplot(1, 1, 1)
    rows = {
        "any4 (learned)": levels,
        "int4": [lo + q * s for q in range(16)],
        "nf4": [v * absmax for v in NF4_GRID],
        "fp4": [v * absmax for v in FP4_GRID],
    }
    for i, (name, lv) in enumerate(rows.items()):
        ax.plot(lv, [i] * len(lv), "o", ms=5, label=name)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(list(rows))
    ax.set_xlabel("weight value")
    fig.tight_layout()
    return fig


def layer_output_mse(layer_mse: dict[str, dict[str, float]], keys: list[str], title: str) -> Figure:
    """Per-layer output MSE on the calibration prompt, one line per format."""
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    for key in keys:
        if key in layer_mse:
            vals = list(layer_mse[key].values())
            ax.plot(range(len(vals)), vals, marker=".", lw=1, label=key)
    ax.set_yscale("log")
    ax.set_xlabel("linear layer (named_modules order)")
    ax.set_ylabel("output MSE")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def loss_curve(losses: list[float]) -> Figure:
    fig = Figure(figsize=(5, 3))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(losses, lw=1)
    ax.set_xlabel("step")
    ax.set_ylabel("train loss")
    ax.set_title("clean model training", fontsize=9)
    fig.tight_layout()
    return fig
