"""Slice triples as PNGs (spec §3.1): ``1ADC_ss`` grey, ``2Z_ADC_blue`` (Z-ADC < −2 painted blue), ROI colours.

Only the middle third of the slices is rendered and sent: indices ⌊0.33·S⌋ … ⌊0.67·S⌋ inclusive.
Each slice is drawn with nearest-neighbour upscaling (``SCALE``), anterior at the top, the
subject's left on the image's left. The ROI image carries a legend panel to the right of the
square slice (colour swatch, ROI id and name of every ROI in the slice); the findings adapter
reads the square part only.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from methods.clinical_got.atlas import palette, roi_table
from methods.clinical_got.generate import Case
from methods.clinical_got.rules import Z_LESION

SCALE = 3
BLUE = (0, 0, 255)
LEGEND_W = 230
KINDS = ("adc", "zmap", "roi")
TITLES = {"adc": "Slice {k}", "zmap": "ZMAP Slice {k}", "roi": "ROI Slice {k}"}


def middle_third(n_slices: int) -> list[int]:
    """Slice indices ⌊0.33·S⌋ … ⌊0.67·S⌋ (inclusive)."""
    return list(range(int(np.floor(0.33 * n_slices)), int(np.floor(0.67 * n_slices)) + 1))


def _orient(sl: np.ndarray) -> np.ndarray:
    """(x, y) slice → image rows (anterior up) × columns (left → right)."""
    return np.flipud(sl.T)


def _up(img: np.ndarray) -> np.ndarray:
    return np.repeat(np.repeat(img, SCALE, axis=0), SCALE, axis=1)


def adc_image(adc_slice: np.ndarray) -> Image.Image:
    """Grey ADC (0–3000 ×10⁻⁶ mm²/s → 0–255; brain pixels are ≥ 1)."""
    g = np.clip(adc_slice / 3000.0 * 255.0, 0, 255)
    g = np.where(adc_slice > 0, np.maximum(g, 1), 0).astype(np.uint8)
    return Image.fromarray(_up(_orient(g)), mode="L").convert("RGB")


def zmap_image(z_slice: np.ndarray, adc_slice: np.ndarray) -> Image.Image:
    """Z-ADC in grey (−10…10 → 0…255) with Z < −2 (inside the brain) painted blue."""
    g = ((np.clip(z_slice, -10, 10) + 10) / 20 * 255).astype(np.uint8)
    rgb = np.stack([g, g, g], axis=-1)
    rgb[adc_slice <= 0] = 0
    rgb[(z_slice < Z_LESION) & (adc_slice > 0)] = BLUE
    return Image.fromarray(_up(_orient_rgb(rgb)), mode="RGB")


def _orient_rgb(rgb: np.ndarray) -> np.ndarray:
    return np.flipud(np.transpose(rgb, (1, 0, 2)))


def roi_image(atlas_slice: np.ndarray) -> Image.Image:
    """ROI colours (exact palette) on black, with a legend panel of the slice's ROIs."""
    pal = palette()
    names = roi_table()
    rgb = np.zeros((*atlas_slice.shape, 3), np.uint8)
    present = [rid for rid in names if (atlas_slice == rid).any()]
    for rid in present:
        rgb[atlas_slice == rid] = pal[rid]
    square = Image.fromarray(_up(_orient_rgb(rgb)), mode="RGB")
    h = square.height
    out = Image.new("RGB", (h + LEGEND_W, h), (255, 255, 255))
    out.paste(square, (0, 0))
    draw = ImageDraw.Draw(out)
    rows = max(1, (h - 4) // 9)
    for i, rid in enumerate(present[: 2 * rows]):
        col, row = divmod(i, rows)
        x0, y0 = h + 4 + col * (LEGEND_W // 2), 2 + row * 9
        draw.rectangle([x0, y0, x0 + 6, y0 + 6], fill=pal[rid])
        draw.text((x0 + 9, y0 - 2), f"{rid} {names[rid][:14]}", fill=(0, 0, 0))
    return out


def render_case(case: Case, out_dir: str | Path) -> list[dict[str, object]]:
    """Write the case's middle-third triples; returns ``[{"slice": k, "adc": path, "zmap": path, "roi": path}]``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    triples = []
    for k in middle_third(case.adc.shape[2]):
        paths = {}
        for kind, img in (
            ("adc", adc_image(case.adc[:, :, k])),
            ("zmap", zmap_image(case.zadc[:, :, k], case.adc[:, :, k])),
            ("roi", roi_image(case.atlas[:, :, k])),
        ):
            p = out / f"{kind}_{k:02d}.png"
            tmp = p.with_name(f".{p.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            img.save(tmp, format="PNG")
            os.replace(tmp, p)  # a reader (another thread or worker) never sees a half-written image
            paths[kind] = str(p)
        triples.append({"slice": k, **paths})
    return triples
