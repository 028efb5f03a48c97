"""FourierMamba deraining on the command line: the ``paperworks fourier-mamba`` group of ``methods/fourier_mamba``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks fourier-mamba derain IMAGE [--add-rain L] [--out derained.png]`` or ``--sample rain100l_1``;
* ``paperworks fourier-mamba train [--preset cpu] [--steps N] [--scan-order zigzag]``.

Hand-written here: IMAGE (validated with the API's upload rules and stored; ``--remote`` uploads it to
``POST /v1/fourier_mamba/derain``) and the derained PNG written to ``--out``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from services.cli.entries import MethodCommands, Output, Upload
from services.cli.jobrun import JobResult
from services.cli.listing import stdout_console

fm = MethodCommands("fourier_mamba", name="fourier-mamba", help="FourierMamba single-image deraining.")


def store_image(path: Path, params: dict[str, Any] | None = None) -> str:
    """Validate an image with the API's upload rules (size, pixels, full decode) and store it; its SHA-256."""
    from fastapi import HTTPException

    from core.artifacts import get_artifact_store
    from core.config import get_settings
    from services.api.uploads import validate_image_bytes

    limit = get_settings().max_upload_bytes
    if path.stat().st_size > limit:
        raise ValueError(f"{path} is larger than {limit} bytes")
    data = path.read_bytes()
    try:
        validate_image_bytes(data, path.name)
    except HTTPException as exc:
        raise ValueError(str(exc.detail)) from None
    return get_artifact_store().put_bytes(data, name=path.name).sha256


def _show(result: JobResult) -> None:
    rep = result.report
    stdout_console().print(f"[bold]{rep.title}[/bold]\n{rep.summary}")


fm.entry(
    "fourier_mamba.derain",
    uploads=(
        Upload(
            "image_sha256",
            "IMAGE",
            "Image to derain (or --sample).",
            store_image,
            api=("/v1/fourier_mamba/derain", "image"),
        ),
    ),
    outputs=(Output("--out", "output.png", "Write the derained PNG here."),),
    show=_show,
)


def register(app) -> None:
    fm.register(app)
