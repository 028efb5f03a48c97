"""Image tools, all offline: OCR (Tesseract), EXIF/GPS geolocation, face detection, perceptual hashing.

* ``ocr``: ``pytesseract`` over the Debian ``tesseract-ocr`` binary.
* ``geolocate``: EXIF GPS coordinates when the file has them; else a configured
  vision model is asked for the country; else an explicit "no location evidence".
* ``detect_faces``: OpenCV's ``FaceDetectorYN`` with a configured YuNet ONNX file
  (OpenCV 5 dropped the Haar ``CascadeClassifier``; the action is only offered
  when a model file is configured).
* Reverse search: a 64-bit perceptual hash (DCT pHash, ``imagehash``) stored as a
  ±1 vector, so the cosine distance Chroma returns is ``hamming / 32``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

HASH_BITS = 64
MATCH_MAX_HAMMING = 10  # pHash distance at or below which two images count as copies


def open_image(path: str | Path):
    from PIL import Image

    img = Image.open(path)
    img.load()
    return img


def phash_vector(path: str | Path) -> list[float]:
    """The image's 64-bit pHash as a ±1 vector (cosine distance = hamming / 32)."""
    import imagehash

    bits = imagehash.phash(open_image(path).convert("RGB")).hash.flatten()
    return [1.0 if b else -1.0 for b in bits]


def hamming_from_cosine(distance: float) -> int:
    return int(round(distance * HASH_BITS / 2))


def ocr_text(path: str | Path) -> str:
    """Text Tesseract reads in the image (stripped)."""
    import pytesseract

    img = open_image(path).convert("RGB")
    if max(img.size) < 400:  # Tesseract reads small renders better when upscaled
        scale = 400 / max(img.size)
        img = img.resize((int(img.width * scale), int(img.height * scale)))
    return pytesseract.image_to_string(img).strip()


def _ratio(v: Any) -> float:
    try:
        return float(v)
    except TypeError:
        num, den = v
        return float(num) / float(den)


def exif_info(path: str | Path) -> dict[str, Any]:
    """Selected EXIF fields: ``gps`` (lat, lon) in degrees, ``taken`` (DateTimeOriginal), ``camera``."""
    img = open_image(path)
    exif = img.getexif()
    out: dict[str, Any] = {}
    if not exif:
        return out
    sub = exif.get_ifd(0x8769)  # Exif IFD
    taken = sub.get(0x9003) or exif.get(0x0132)
    if taken:
        out["taken"] = str(taken)
    camera = " ".join(str(x) for x in (exif.get(0x010F), exif.get(0x0110)) if x)
    if camera:
        out["camera"] = camera
    gps = exif.get_ifd(0x8825)
    if gps and 2 in gps and 4 in gps:

        def deg(vals: Any, ref: str) -> float:
            d, m, s = (_ratio(v) for v in vals)
            val = d + m / 60.0 + s / 3600.0
            return -val if ref in ("S", "W") else val

        out["gps"] = (round(deg(gps[2], str(gps.get(1, "N"))), 6), round(deg(gps[4], str(gps.get(3, "E"))), 6))
    return out


def geolocate(path: str | Path, image_ref: str, vlm_model: str | None = None) -> str:
    """Location evidence for an image, as text (not summarised by the LLM, spec §3.2 Stage 3)."""
    info = exif_info(path)
    if "gps" in info:
        lat, lon = info["gps"]
        extra = f", taken {info['taken']}" if "taken" in info else ""
        return f"EXIF GPS metadata of {image_ref}: latitude {lat}, longitude {lon}{extra}."
    if vlm_model:
        from core.llm import complete

        c = complete(
            [
                "Which country was this photo most likely taken in? Name the top 3 countries with rough probabilities.",
                open_image(path),
            ],
            model=vlm_model,
            max_tokens=80,
            tag="geolocate",
        )
        return f"Geolocation of {image_ref} by {vlm_model}: {c.text.strip()}"
    taken = f" EXIF says it was taken {info['taken']}." if "taken" in info else ""
    return (
        f"No location evidence for {image_ref}: the file has no EXIF GPS data and no geolocation "
        f"model is configured.{taken}"
    )


def detect_faces(path: str | Path, model_file: str) -> list[tuple[int, int, int, int, float]]:
    """Face boxes (x, y, w, h, score) found by OpenCV's YuNet detector."""
    import cv2
    import numpy as np

    img = np.asarray(open_image(path).convert("RGB"))[:, :, ::-1].copy()
    h, w = img.shape[:2]
    det = cv2.FaceDetectorYN.create(model_file, "", (w, h), 0.7)
    _, faces = det.detect(img)
    if faces is None:
        return []
    return [(int(f[0]), int(f[1]), int(f[2]), int(f[3]), float(f[-1])) for f in faces]
