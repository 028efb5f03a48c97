"""FourierMamba deraining on the command line (the ``paperworks fourier-mamba`` group).

* ``paperworks fourier-mamba derain IMAGE [--add-rain L] [--out derained.png]`` or ``--sample rain100l_1``
* ``paperworks fourier-mamba train [--preset cpu] [--steps N] [--scan-order zigzag]``

Jobs run in this process with a progress bar, or ``--remote`` through the API
(``paperworks run fourier_mamba.derain -p sample=rain100l_2`` works too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from services.cli.jobrun import Amp, Device, JobResult, device_params, fail, run_job
from services.cli.progress import console

fm_app = typer.Typer(help="FourierMamba single-image deraining.", no_args_is_help=True)


def _store_image(path: Path) -> str:
    """Validate IMAGE with the API's upload rules (size, pixels, full decode) and store it; returns its SHA-256."""
    from fastapi import HTTPException

    from core.artifacts import get_artifact_store
    from core.config import get_settings
    from services.api.uploads import validate_image_bytes

    if path.stat().st_size > get_settings().max_upload_bytes:
        raise typer.BadParameter(f"{path} is larger than {get_settings().max_upload_bytes} bytes")
    data = path.read_bytes()
    try:
        validate_image_bytes(data, path.name)
    except HTTPException as exc:
        raise typer.BadParameter(str(exc.detail)) from None
    return get_artifact_store().put_bytes(data, name=path.name).sha256


@fm_app.command("derain")
def derain(
    image: Annotated[Path | None, typer.Argument(exists=True, dir_okay=False, help="Image to derain.")] = None,
    sample: Annotated[
        str | None, typer.Option(help="Instead of IMAGE: rain100l_1, rain100l_2, rain100l_3, china or flower.")
    ] = None,
    add_rain: Annotated[str | None, typer.Option(help="Add synthetic rain first: L (light) or H (heavy).")] = None,
    rain_seed: Annotated[int, typer.Option(min=0, help="Seed of the synthetic rain.")] = 0,
    preset: Annotated[str, typer.Option(help="Model preset: cpu, spec or tiny.")] = "cpu",
    scan_order: Annotated[str, typer.Option(help="zigzag, chebyshev or raster.")] = "zigzag",
    out: Annotated[Path | None, typer.Option(help="Write the derained PNG here.")] = None,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False,
) -> None:
    """Derain IMAGE (or a sample); prints PSNR/SSIM on Y when a ground truth exists."""
    if (image is None) == (sample is None):
        raise typer.Exit(code=fail("give exactly one of IMAGE or --sample"))
    params: dict[str, Any] = {
        "add_rain": add_rain,
        "rain_seed": rain_seed,
        "preset": preset,
        "scan_order": scan_order,
    }
    params |= {"image_sha256": _store_image(image)} if image is not None else {"sample": sample}

    def show(result: JobResult) -> None:
        rep = result.report
        console.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
        if out:
            out.write_bytes(result.artifact_bytes("output.png"))
            console.print(f"derained image written to {out}")

    raise typer.Exit(
        code=run_job("fourier_mamba.derain", params | device_params(device, amp), remote=remote, show=show)
    )


@fm_app.command("train")
def train(
    preset: Annotated[str, typer.Option(help="cpu, spec or tiny.")] = "cpu",
    scan_order: Annotated[str, typer.Option(help="zigzag, chebyshev or raster.")] = "zigzag",
    steps: Annotated[int | None, typer.Option(min=1, help="Override the preset's steps.")] = None,
    seed: Annotated[int, typer.Option(min=0)] = 0,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False,
) -> None:
    """Train a FourierMamba model and cache it for ``derain``."""
    params = {"preset": preset, "scan_order": scan_order, "steps": steps, "seed": seed}
    raise typer.Exit(code=run_job("fourier_mamba.train", params | device_params(device, amp), remote=remote))


def register(app: typer.Typer) -> None:
    app.add_typer(fm_app, name="fourier-mamba")
