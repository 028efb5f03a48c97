"""RF-Solver / RF-Edit on the command line.

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
from typing import Annotated, Any

import typer

from services.cli.progress import console, progress_bar

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


def _run(method: str, params: dict[str, Any], remote: bool, report_out: Path | None) -> str | None:
    """Run the job; returns its id when it ran here and succeeded."""
    if remote:
        from services.cli.remote import run_remote

        raise typer.Exit(code=run_remote(method, params, report_out))
    from core.db import migrate
    from core.jobs.lifecycle import run_inline
    from core.jobs.registry import InvalidParams

    migrate.upgrade()
    try:
        with progress_bar(method) as update:
            job_id, outcome = run_inline(method, params, sink=update)
    except InvalidParams as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from None
    if outcome.status != "succeeded":
        console.print(f"[red]job {job_id} {outcome.status}:[/red] {outcome.error}")
        raise typer.Exit(code=1)
    return job_id


def _report(job_id: str):
    from core.db import crud
    from core.db.session import session_scope
    from core.jobs.report import Report

    with session_scope() as s:
        return Report.model_validate(crud.get_report_for_job(s, job_id=job_id).body)


def _artifact_bytes(artifact_id: str) -> bytes:
    from core.artifacts import get_artifact_store
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        sha = crud.get_artifact(s, artifact_id=artifact_id).sha256
    return get_artifact_store().read(sha)


def _print_metrics(report, keys: list[str]) -> None:
    console.print(f"[bold]{report.title}[/bold]\n{report.summary}")
    for k in keys:
        if k in report.metrics:
            v = report.metrics[k]
            console.print(f"  {k:<22} {format(v, '.4g') if isinstance(v, float) else v}")


@rf_app.command("edit")
def edit(image: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Image to edit.")],
         source_label: Annotated[str, typer.Option(help="Label describing IMAGE (0-9, china, flower).")],
         target_label: Annotated[str, typer.Option(help="Label to edit towards.")],
         steps: Annotated[int, typer.Option(min=1, max=100, help="Timesteps N.")] = 15,
         inject: Annotated[int, typer.Option(min=0, max=100, help="Denoising steps sharing the source V.")] = 2,
         order: Annotated[int, typer.Option(min=1, max=2, help="1 = Euler, 2 = RF-Solver-2.")] = 2,
         guidance: Annotated[float, typer.Option(min=1.0, max=10.0)] = 2.0,
         model: Annotated[str, typer.Option(help="auto, digits or photo.")] = "auto",
         offload: Annotated[bool, typer.Option(help="Keep the V cache on disk.")] = False,
         out: Annotated[Path | None, typer.Option(help="Write source | reconstruction | edit PNG here.")] = None,
         report: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
         remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False) -> None:
    """Invert IMAGE under SOURCE_LABEL with RF-Solver and resample it under TARGET_LABEL, sharing V."""
    params = {"image_sha256": _store_image(image), "source_label": source_label, "target_label": target_label,
              "steps": steps, "inject": inject, "order": order, "guidance": guidance, "model": model,
              "offload": offload}
    job_id = _run("rf.edit", params, remote, report)
    rep = _report(job_id)
    _print_metrics(rep, ["recon_psnr", "recon_ssim", "edit_mse_to_source", "edit_nfe", "cached_v_tensors",
                         "edit_seconds"])
    if out:
        out.write_bytes(_artifact_bytes(rep.artifact("side_by_side.png").id))
        console.print(f"source | reconstruction | edit written to {out}")
    if report:
        report.write_text(rep.to_markdown(lambda ref: f"artifact:{ref.id}"), encoding="utf-8")


@rf_app.command("reconstruct")
def reconstruct(image: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
                label: Annotated[str, typer.Option(help="Label of IMAGE.")],
                nfes: Annotated[str, typer.Option(help="Comma-separated even NFEs per direction.")] = "4,10,20,50",
                model: Annotated[str, typer.Option(help="auto, digits or photo.")] = "auto",
                out: Annotated[Path | None, typer.Option(help="Write the error-vs-NFE plot here.")] = None,
                remote: Annotated[bool, typer.Option()] = False) -> None:
    """Invert and reconstruct IMAGE at several NFE budgets: Euler vs RF-Solver-2 at equal NFE."""
    try:
        budgets = [int(x) for x in nfes.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter("--nfes takes comma-separated integers") from None
    params = {"image_sha256": _store_image(image), "label": label, "nfes": budgets, "model": model}
    rep = _report(_run("rf.reconstruct", params, remote, None))
    console.print(f"[bold]{rep.title}[/bold]")
    console.print(rep.tables[0].to_markdown())
    if out:
        out.write_bytes(_artifact_bytes(rep.artifact("recon_vs_nfe.png").id))
        console.print(f"plot written to {out}")


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
