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
    """Decode an image fully; 415 for non-images (and corrupt pixel data), 413 for too many pixels.

    ``verify()`` alone only checks a PNG's chunk checksums: a file with valid checksums and garbage
    compressed pixels passed it. The image is therefore decoded to the last pixel (``load()``), after
    the pixel count was checked against ``max_image_pixels`` (so a decompression bomb is refused
    before it is inflated). Pillow's own process-wide bomb limit is left as it is.
    """
    import warnings

    from PIL import Image, UnidentifiedImageError

    settings = get_settings()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                fmt = (im.format or "").upper()
                w, h = im.size
                if w * h > settings.max_image_pixels:
                    raise HTTPException(
                        413, f"{filename}: {w}x{h} pixels exceeds the limit of {settings.max_image_pixels}"
                    )
                im.load()  # every pixel decoded: truncated or corrupt data fails here
    except HTTPException:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise HTTPException(413, f"{filename}: too many pixels ({exc})") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise HTTPException(415, f"{filename} is not a readable image: {exc}") from None
    except Exception as exc:  # decoders raise assorted errors on hostile data: still the client's fault
        raise HTTPException(415, f"{filename} is not a readable image: {type(exc).__name__}") from None
    if fmt not in IMAGE_FORMATS:
        raise HTTPException(415, f"{filename}: unsupported image format {fmt!r}")
    return UploadedImage(filename=filename, data=data, format=fmt, width=w, height=h)


SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"RIFF", "a RIFF file (a WebP image or a WAV sound)"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BM", "a BMP image"),
)


def text_or_error(data: bytes, filename: str, expected: str = "a text file") -> str:
    """The upload as UTF-8 text; a file that is not text raises ``ValueError`` with a sentence saying what it is.

    A PNG renamed ``table.csv`` gives ``table.csv is not a CSV table: its content is a PNG image`` rather
    than a codec error about byte 0x89; the CLI and the API say the same.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        what = next((w for sig, w in SIGNATURES if data.startswith(sig)), None)
        if what is None:
            what = f"not UTF-8 text (byte {data[exc.start]:#04x} at position {exc.start})"
        raise ValueError(f"{filename} is not {expected}: its content is {what}") from None


def store_upload(data: bytes, *, name: str, owner: str) -> str:
    """Put an upload into the artifact store and record it as ``owner``'s; returns its SHA-256.

    Job params name uploads by digest (``image_sha256``); a key may name only its own
    (:func:`core.ownership.check_params`), so every upload the API stores is recorded for its key.
    """
    from core.artifacts import get_artifact_store
    from core.ownership import record

    sha = get_artifact_store().put_bytes(data, name=name).sha256
    record("upload", sha, owner=owner)
    return sha


def record_server_file(path: str, *, owner: str) -> str:
    """Record a file the API wrote for ``owner`` (DEFAME's stored images), so its jobs may name it; returns it."""
    from core.ownership import record

    record("path", path, owner=owner)
    return path


async def read_image(file: UploadFile) -> UploadedImage:
    """Read and validate one uploaded image."""
    return validate_image_bytes(await read_upload(file), file.filename or "upload")


def strict_utf8_multipart() -> None:
    """Multipart text that is not valid UTF-8 is a 400, not silently re-read as Latin-1.

    Starlette's form parser falls back to Latin-1 when a part does not decode with the declared
    charset (UTF-8 by default), so invalid bytes in DEFAME's ``claim`` became garbled text. The
    parser's decode helper is wrapped (once, process-wide) to raise the parser's own
    ``MultiPartException`` instead, which Starlette answers with 400. Other charsets a client
    declares explicitly keep their behaviour.
    """
    from starlette import formparsers

    original = formparsers._user_safe_decode
    if getattr(original, "strict_utf8", False):
        return

    def decode(src: bytes | bytearray, codec: str) -> str:
        if codec.replace("_", "-").lower() in ("utf-8", "utf8"):
            try:
                return bytes(src).decode("utf-8")
            except UnicodeDecodeError:
                raise formparsers.MultiPartException("a form field is not valid UTF-8") from None
        return original(src, codec)

    decode.strict_utf8 = True  # type: ignore[attr-defined]
    formparsers._user_safe_decode = decode
