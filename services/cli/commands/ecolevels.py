"""EcoLevels on the command line.

* ``paperworks ecolevels probes`` — the registry with each probe's level and EV for a target;
* ``paperworks ecolevels run [--model M] [--target resume_screener] [--probe P ...] [--remote]`` — the flow;
* ``paperworks ecolevels classify "description" [--target T]`` — level and EV (the model fills the fields).

``paperworks reproduce ecolevels`` regenerates ``docs/results/ecolevels.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from services.cli.jobrun import JobResult, run_job
from services.cli.progress import console

eco_app = typer.Typer(help="EcoLevels: bias probes on level × ecological validity.", no_args_is_help=True)
Target = Annotated[str, typer.Option(help="resume_screener or letter_assistant.")]


@eco_app.command("probes")
def probes(target: Target = "resume_screener") -> None:
    """The probe registry: level (§3.2) and EV for TARGET (§3.1)."""
    from methods.ecolevels.classify import classify
    from methods.ecolevels.registry import load_probes
    from methods.ecolevels.validity import TARGETS, band, ecological_validity

    t = Table("probe", "level", "EV", "band", "runnable", title=f"EV for {TARGETS[target].name}")
    for p in load_probes(from_db=False):
        ev = ecological_validity(p.metadata, TARGETS[target])
        t.add_row(p.id, classify(p.metadata), f"{ev:.1f}", band(ev), "yes" if p.runner else "no")
    console.print(t)


@eco_app.command("run")
def run(
    model: Annotated[str | None, typer.Option(help="litellm model string.")] = None,
    target: Target = "resume_screener",
    probe: Annotated[list[str], typer.Option(help="Probes to run (default: the §3.3 selection).")] = [],  # noqa: B006
    seeds: Annotated[list[int], typer.Option(help="Seeds.")] = [0, 1],  # noqa: B006
    units: Annotated[int, typer.Option(help="Units per paraphrase × seed.")] = 8,
    mode: Annotated[
        str, typer.Option(help="inline, or jobs: ecolevels.probe fan-out to the workers (with --remote).")
    ] = "inline",
    remote: Annotated[bool, typer.Option(help="Submit to the API and follow the job.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
) -> None:
    """Select, run, place and reconcile probes for TARGET."""
    params = {"model": model, "target": target, "probes": probe, "seeds": seeds, "n_units": units, "mode": mode}
    raise typer.Exit(code=run_job("ecolevels.run", params, remote=remote, out=out, show=_show))


@eco_app.command("classify")
def classify_cmd(
    description: Annotated[str, typer.Argument(help="A free-text description of a bias probe.")],
    target: Target = "resume_screener",
    model: Annotated[str | None, typer.Option(help="Model that fills the metadata fields.")] = None,
) -> None:
    """Level and EV of a probe described in words (the model extracts the fields, the rules decide)."""
    params = {"description": description, "target": target, "model": model}
    raise typer.Exit(code=run_job("ecolevels.classify", params, show=_show))


def _show(result: JobResult) -> None:
    rep = result.report
    console.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables[:3]:
        t = Table(*table.columns, title=table.title)
        for row in table.rows:
            t.add_row(*(f"{v:+.3f}" if isinstance(v, float) else str(v) for v in row))
        console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(eco_app, name="ecolevels")
