"""RF-Solver / RF-Edit on the command line: the ``paperworks rf`` group of ``methods/rf_solver``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks rf edit IMAGE --source-label 3 --target-label 8 --steps 15 --inject 2 [--out edit.png]``
  (or ``--example boy.jpg`` / ``--digit-index 5`` instead of IMAGE);
* ``paperworks rf reconstruct IMAGE --label 3 --nfes 4,10,20,50``.

Hand-written: IMAGE (decoded and stored; ``--remote`` uploads it to ``POST /v1/rf/edit``), the images written
to ``--out`` (the Markdown report goes to ``--report``), the printed metrics, and
``paperworks rf train [digits|photo|tiny]`` (trains a preset's model; otherwise it trains on first use).
Labels pick the model: digits ``0``–``9`` (16×16 grey) or ``china``/``flower`` (32×32 colour).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from services.cli.commands.fourier_mamba import store_image
from services.cli.entries import MethodCommands, Output, Upload
from services.cli.jobrun import JobResult
from services.cli.listing import stdout_console
from services.cli.progress import console, progress_bar

if TYPE_CHECKING:
    from core.jobs.report import Report

rf = MethodCommands("rf_solver", name="rf", help="RF-Solver inversion and RF-Edit image editing.")


def _print_metrics(report: Report, keys: list[str]) -> None:
    out = stdout_console()
    out.print(f"[bold]{report.title}[/bold]\n{report.summary}")
    for k in keys:
        if k in report.metrics:
            v = report.metrics[k]
            out.print(f"  {k:<22} {format(v, '.4g') if isinstance(v, float) else v}")


def _show_edit(result: JobResult) -> None:
    keys = ["recon_psnr", "recon_ssim", "edit_mse_to_source", "edit_nfe", "cached_v_tensors", "edit_seconds"]
    _print_metrics(result.report, keys)


def _show_reconstruct(result: JobResult) -> None:
    out = stdout_console()
    out.print(f"[bold]{result.report.title}[/bold]")
    out.print(result.report.tables[0].to_markdown())


rf.entry(
    "rf.edit",
    uploads=(Upload("image_sha256", "IMAGE", "Image to edit.", store_image, api=("/v1/rf/edit", "image")),),
    outputs=(Output("--out", "side_by_side.png", "Write source | reconstruction | edit PNG here."),),
    show=_show_edit,
)
rf.entry(
    "rf.reconstruct",
    uploads=(Upload("image_sha256", "IMAGE", "Image to invert.", store_image, api=("/v1/rf/reconstruct", "image")),),
    outputs=(Output("--out", "recon_vs_nfe.png", "Write the error-vs-NFE plot here."),),
    show=_show_reconstruct,
)


@rf.command("train")
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
    rf.register(app)
