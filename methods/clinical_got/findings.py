"""The "visual findings" adapter: deterministic image-to-text from the rendered PNGs (spec §6).

SmolLM2-135M cannot see, so each LLM node of a text-only model gets a compact table read off
the same PNGs a vision model would receive: per slice, brain pixels (ADC > 0), blue pixels in the
Z-map (Z-ADC < −2) and their share; then, over the middle third, the blue share of every ROI colour
it overlaps (read from the ROI image's exact palette). It sees only what the images show — the
middle third of the slices — so its numbers are estimates of the whole-volume truth, not copies.

Adapters are pluggable: :data:`ADAPTERS` maps a name to ``fn(triples) -> str``; a real VLM captioner
can be registered beside ``"pixels"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PIL import Image

from methods.clinical_got.atlas import palette, roi_table
from methods.clinical_got.render import BLUE

MAX_ROIS = 15


def _rgb(path: str) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def read_slice(triple: dict[str, Any]) -> dict[str, Any]:
    """Pixel counts of one slice triple: brain, blue, and per ROI id (pixels, blue pixels)."""
    adc = _rgb(str(triple["adc"]))
    z = _rgb(str(triple["zmap"]))
    roi = _rgb(str(triple["roi"]))[:, : adc.shape[1]]  # the square slice, not the legend
    brain = adc.max(axis=-1) > 0
    blue = np.all(z == np.array(BLUE, np.uint8), axis=-1) & brain
    code = roi[..., 0].astype(np.int64) << 16 | roi[..., 1].astype(np.int64) << 8 | roi[..., 2]
    per_roi: dict[int, tuple[int, int]] = {}
    for rid, (r, g, b) in palette().items():
        m = code == (r << 16 | g << 8 | b)
        n = int(m.sum())
        if n:
            per_roi[rid] = (n, int((m & blue).sum()))
    return {"slice": triple["slice"], "brain": int(brain.sum()), "blue": int(blue.sum()), "rois": per_roi}


def pixel_findings(triples: Sequence[dict[str, Any]]) -> str:
    """The default adapter: per-slice blue counts and the ROIs the blue pixels fall in."""
    names = roi_table()
    reads = [read_slice(t) for t in triples]
    lines = ["Visual findings read from the images (blue = Z-ADC < -2):", "slice: blue px / brain px (blue %)"]
    for r in reads:
        share = 100 * r["blue"] / r["brain"] if r["brain"] else 0.0
        lines.append(f"{r['slice']}: {r['blue']}/{r['brain']} ({share:.2f}%)")
    brain = sum(r["brain"] for r in reads)
    blue = sum(r["blue"] for r in reads)
    lines.append(f"all shown slices: {blue}/{brain} ({100 * blue / brain if brain else 0.0:.2f}%)")
    tot: dict[int, list[int]] = {}
    for r in reads:
        for rid, (n, b) in r["rois"].items():
            acc = tot.setdefault(rid, [0, 0])
            acc[0] += n
            acc[1] += b
    hit = sorted(((b / n, rid) for rid, (n, b) in tot.items() if b > 0), reverse=True)
    if hit:
        lines.append("ROIs with blue (ROI id name: blue share of the ROI's pixels):")
        lines += [f"{rid} {names[rid]}: {share:.2f}" for share, rid in hit[:MAX_ROIS]]
        if len(hit) > MAX_ROIS:
            lines.append(f"... and {len(hit) - MAX_ROIS} more ROIs with a few blue pixels")
    else:
        lines.append("No blue pixels in any ROI.")
    return "\n".join(lines)


ADAPTERS: dict[str, Callable[[Sequence[dict[str, Any]]], str]] = {"pixels": pixel_findings}


def findings(triples: Sequence[dict[str, Any]], adapter: str = "pixels") -> str:
    """The named adapter's text for a case's slice triples."""
    if adapter not in ADAPTERS:
        raise ValueError(f"unknown visual findings adapter {adapter!r}; known: {', '.join(ADAPTERS)}")
    return ADAPTERS[adapter](triples)
