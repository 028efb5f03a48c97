"""Validation of uploaded files: size limits and real image decoding."""

from __future__ import annotations

import io
from dataclasses import dataclass

from fastapi import HTTPException, UploadFile, status

from core.config import get_settings

IMAGE_FORMATS = {"PNG", "JPEG", "GIF", "BMP", "WEBP", "TIFF"}


@dataclass
class UploadedImage:
    filename: str
    data: bytes
    format: str
    width: int
    height: int

    def pil(self):
        from PIL import Image

        return Image.open(io.BytesIO(self.data))


async def read_upload(file: UploadFile, *, max_bytes: int | None = None) -> bytes:
    """Read an upload, refusing (413) anything larger than ``max_bytes`` (default: settings)."""
    limit = max_bytes or get_settings().max_upload_bytes
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"{file.filename or 'upload'} is larger than {limit} bytes")
    if not data:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"{file.filename or 'upload'} is empty")
    return data


def validate_image_bytes(data: bytes, filename: str = "upload") -> UploadedImage:
    """Decode an image fully; 415 for non-images, 413 for decompression bombs."""
    from PIL import Image, UnidentifiedImageError

    settings = get_settings()
    try:
        with Image.open(io.BytesIO(data)) as im:
            fmt = (im.format or "").upper()
            w, h = im.size
            if w * h > settings.max_image_pixels:
                raise HTTPException(413, f"{filename}: {w}x{h} pixels exceeds the limit of {settings.max_image_pixels}")
            im.verify()
    except HTTPException:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise HTTPException(415, f"{filename} is not a readable image: {exc}") from None
    if fmt not in IMAGE_FORMATS:
        raise HTTPException(415, f"{filename}: unsupported image format {fmt!r}")
    return UploadedImage(filename=filename, data=data, format=fmt, width=w, height=h)


async def read_image(file: UploadFile) -> UploadedImage:
    """Read and validate one uploaded image."""
    return validate_image_bytes(await read_upload(file), file.filename or "upload")
