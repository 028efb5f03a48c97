"""Where fact-check images live: validated, content-addressed copies under ``<home>/defame/media``."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path


def media_dir() -> Path:
    from core.config import get_settings

    d = Path(get_settings().home) / "defame" / "media"
    d.mkdir(parents=True, exist_ok=True)
    return d


def store_image(data: bytes, *, max_pixels: int | None = None) -> Path:
    """Validate image bytes (decodable, not too large) and keep a content-addressed PNG/JPEG copy."""
    from PIL import Image

    from core.config import get_settings

    limit = max_pixels or get_settings().max_image_pixels
    # Pillow's process-wide bomb limit stays in force (it used to be switched off here for everyone);
    # our own, usually lower, limit below gives the clear message
    try:
        img = Image.open(io.BytesIO(data))
        w, h = img.size
    except Image.DecompressionBombError as exc:
        raise ValueError(f"image too large: {exc}") from None
    except Exception as exc:
        raise ValueError(f"not a readable image: {exc}") from None
    if w * h > limit:
        raise ValueError(f"image too large: {w}x{h} pixels (limit {limit})")
    try:
        img.verify()
    except Exception as exc:
        raise ValueError(f"corrupt image: {exc}") from None
    fmt = (img.format or "PNG").lower()
    ext = {"jpeg": ".jpg", "png": ".png", "webp": ".webp", "gif": ".gif", "bmp": ".bmp", "tiff": ".tif"}.get(
        fmt, ".png"
    )
    path = media_dir() / (hashlib.sha256(data).hexdigest()[:24] + ext)
    if not path.exists():
        path.write_bytes(data)
    return path
