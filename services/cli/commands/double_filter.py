"""Double-Filter on the command line (the ``paperworks double-filter`` group of ``methods/double_filter``).

* ``paperworks double-filter patches --rho 0.5 --count 6 --out kept.png`` — IPF's kept patches on test scenes
* ``paperworks double-filter experiment --tasks vqa,nlvr --seeds 3`` — no filter / IPF / ALF / both per task

Jobs run in this process with a progress bar, or ``--remote`` through the API
(``double_filter.patches`` / ``double_filter.experiment``); ``paperworks reproduce double_filter`` writes the results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from services.cli.jobrun import Amp, Device, JobResult, device_params, run_job
from services.cli.progress import console

df_app = typer.Typer(help="Double-Filter: patch & layer filtering of a vision-language model.", no_args_is_help=True)


@df_app.command("patches")
def patches(
    rho: Annotated[float, typer.Option(help="Keep ratio ρ.")] = 0.5,
    start: Annotated[int, typer.Option(min=0, help="First test scene.")] = 0,
    count: Annotated[int, typer.Option(min=1, max=10, help="How many scenes.")] = 6,
    detector: Annotated[str, typer.Option(help="components or boxes.")] = "components",
    out: Annotated[Path | None, typer.Option(help="Write the overlay PNG here.")] = None,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False,
) -> None:
    """Filter patches of test scenes and print which were kept (foreground/background counts)."""
    params = {"rho": rho, "start": start, "count": count, "detector": detector}

    def show(result: JobResult) -> None:
        rep = result.report
        console.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
        table = rep.tables[0]
        for row in table.rows:
            console.print(f"scene {row[0]}: kept [{row[3]}] ({row[4]} foreground, {row[5]} background)")
        if out:
            out.write_bytes(result.artifact_bytes("kept_patches.png"))
            console.print(f"overlay written to {out}")

    raise typer.Exit(
        code=run_job("double_filter.patches", params | device_params(device, amp), remote=remote, show=show)
    )


@df_app.command("experiment")
def experiment(
    tasks: Annotated[str, typer.Option(help="Comma-separated: vqa, nlvr, retrieval.")] = "vqa",
    seeds: Annotated[int, typer.Option(min=1, max=10, help="Seeds.")] = 1,
    steps: Annotated[int, typer.Option(min=1, help="Fine-tuning steps per arm.")] = 120,
    rho: Annotated[float, typer.Option(help="IPF keep ratio ρ.")] = 0.5,
    generations: Annotated[int, typer.Option(min=1, help="GA generations.")] = 20,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False,
) -> None:
    """Score vs FLOPs/latency for no filter, IPF, the GA layer filter and both."""
    names = [t.strip() for t in tasks.split(",") if t.strip()]
    params = {"tasks": names, "seeds": seeds, "steps": steps, "rho": rho, "generations": generations}
    raise typer.Exit(code=run_job("double_filter.experiment", params | device_params(device, amp), remote=remote))


def register(app: typer.Typer) -> None:
    app.add_typer(df_app, name="double-filter")
