"""RF-Solver / RF-Edit on the command line (the ``paperworks rf`` group of ``methods/rf_solver``).

* ``paperworks rf edit IMAGE --source-label 3 --target-label 8 --steps 15 --inject 2 [--out edit.png]``
* ``paperworks rf reconstruct IMAGE --label 3 --nfes 4,10,20,50``
* ``paperworks rf train [digits|photo|tiny]`` (otherwise the model trains on first use)

Labels pick the model: digits ``0``–``9`` (16×16 grey) or ``china``/``flower`` (32×32 colour).
Jobs run in this process with a progress bar, or ``--remote`` through the API.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from services.cli.jobrun import Amp, Device, JobResult, device_params, run_job
from services.cli.progress import console, progress_bar

if TYPE_CHECKING:
    from core.jobs.report import Report

rf_app = typer.Typer(help="RF-Solver inversion and RF-Edit image editing.", no_args_is_help=True)


def _store_image(path: Path) -> str:
    """Validate IMAGE (size, decodable, pixel count) and put it in the artifact store."""
    from PIL import Image, UnidentifiedImageError

    from core.artifacts import get_artifact_store
    from core.config import get_settings

    s = get_settings()
    if path.stat().st_size > s.max_upload_bytes:
        raise typer.BadParameter(f"{path} is larger than {s.max_upload_bytes} bytes")
    data = path.read_bytes()
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.width * im.height > s.max_image_pixels:
                raise typer.BadParameter(f"{path}: {im.width}x{im.height} exceeds {s.max_image_pixels} pixels")
            im.verify()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise typer.BadParameter(f"{path} is not a readable image: {exc}") from None
    return get_artifact_store().put_bytes(data, name=path.name).sha256


def _print_metrics(report: Report, keys: list[str]) -> None:
    console.print(f"[bold]{report.title}[/bold]\n{report.summary}")
    for k in keys:
        if k in report.metrics:
            v = report.metrics[k]
            console.print(f"  {k:<22} {format(v, '.4g') if isinstance(v, float) else v}")


@rf_app.command("edit")
def edit(
    image: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Image to edit.")],
    source_label: Annotated[str, typer.Option(help="Label describing IMAGE (0-9, china, flower).")],
    target_label: Annotated[str, typer.Option(help="Label to edit towards.")],
    steps: Annotated[int, typer.Option(min=1, max=100, help="Timesteps N.")] = 15,
    inject: Annotated[int, typer.Option(min=0, max=100, help="Denoising steps sharing the source V.")] = 2,
    order: Annotated[int, typer.Option(min=1, max=2, help="1 = Euler, 2 = RF-Solver-2.")] = 2,
    guidance: Annotated[float, typer.Option(min=1.0, max=10.0)] = 2.0,
    model: Annotated[str, typer.Option(help="auto, digits or photo.")] = "auto",
    offload: Annotated[bool, typer.Option(help="Keep the V cache on disk.")] = False,
    v_keys: Annotated[
        str, typer.Option(help="Ablation: interval (spec: the interval's upper time) or eval (evaluation time).")
    ] = "interval",
    cfg_halves: Annotated[str, typer.Option(help="Ablation: both (spec) or cond (conditional half only).")] = "both",
    blocks: Annotated[str, typer.Option(help="Ablation: all single-stream blocks (spec) or later_half.")] = "all",
    out: Annotated[Path | None, typer.Option(help="Write source | reconstruction | edit PNG here.")] = None,
    report: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False,
) -> None:
    """Invert IMAGE under SOURCE_LABEL with RF-Solver and resample it under TARGET_LABEL, sharing V."""
    params = {
        "image_sha256": _store_image(image),
        "source_label": source_label,
        "target_label": target_label,
        "steps": steps,
        "inject": inject,
        "order": order,
        "guidance": guidance,
        "model": model,
        "offload": offload,
        "v_keys": v_keys,
        "cfg_halves": cfg_halves,
        "blocks": blocks,
    }

    def show(result: JobResult) -> None:
        _print_metrics(
            result.report,
            ["recon_psnr", "recon_ssim", "edit_mse_to_source", "edit_nfe", "cached_v_tensors", "edit_seconds"],
        )
        if out:
            out.write_bytes(result.artifact_bytes("side_by_side.png"))
            console.print(f"source | reconstruction | edit written to {out}")

    raise typer.Exit(code=run_job("rf.edit", params | device_params(device, amp), remote=remote, out=report, show=show))


@rf_app.command("reconstruct")
def reconstruct(
    image: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    label: Annotated[str, typer.Option(help="Label of IMAGE.")],
    nfes: Annotated[str, typer.Option(help="Comma-separated even NFEs per direction.")] = "4,10,20,50",
    model: Annotated[str, typer.Option(help="auto, digits or photo.")] = "auto",
    out: Annotated[Path | None, typer.Option(help="Write the error-vs-NFE plot here.")] = None,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option()] = False,
) -> None:
    """Invert and reconstruct IMAGE at several NFE budgets: Euler vs RF-Solver-2 at equal NFE."""
    try:
        budgets = [int(x) for x in nfes.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter("--nfes takes comma-separated integers") from None
    params = {"image_sha256": _store_image(image), "label": label, "nfes": budgets, "model": model}

    def show(result: JobResult) -> None:
        console.print(f"[bold]{result.report.title}[/bold]")
        console.print(result.report.tables[0].to_markdown())
        if out:
            out.write_bytes(result.artifact_bytes("recon_vs_nfe.png"))
            console.print(f"plot written to {out}")

    raise typer.Exit(code=run_job("rf.reconstruct", params | device_params(device, amp), remote=remote, show=show))


@rf_app.command("train")
def train(preset: Annotated[str, typer.Argument(help="digits, photo or tiny.")] = "digits") -> None:
    """Train (or load) a preset's RF model and save it with its config under the cache directory."""
    from methods.rf_solver.checkpoints import get_model
    from methods.rf_solver.config import get_preset

    try:
        p = get_preset(preset)
    except KeyError as exc:
        raise typer.BadParameter(str(exc)) from None
    t0 = time.perf_counter()
    with progress_bar(f"train {preset}") as update:
        _, folder = get_model(p, callbacks=(lambda s, loss: update((s + 1) / p.train.steps, f"loss {loss:.3f}"),))
    console.print(f"{preset} model ready at {folder} ({time.perf_counter() - t0:.0f} s)")


def register(app: typer.Typer) -> None:
    app.add_typer(rf_app, name="rf")
