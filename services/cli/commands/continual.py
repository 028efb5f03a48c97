"""Class-incremental runs on the command line.

* ``paperworks continual methods`` — registered harness methods, their arms (heads) and presets;
* ``paperworks continual run dpcr --preset quick --seeds 2 --samples-per-class 32 [-o key=value] [--remote]``
  — a ``continual.run`` job in this process with a progress bar (or through the API), then the arm table.

``paperworks reproduce dpcr`` regenerates ``docs/results/dpcr.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from services.cli.jobrun import Amp, Device, JobResult, device_params, fail, parse_kv, run_job
from services.cli.progress import console

continual_app = typer.Typer(help="Class-incremental learning harness (DPCR, ...).", no_args_is_help=True)


@continual_app.command("methods")
def methods() -> None:
    """List the continual methods the harness can run."""
    from methods.continual.learner import list_learners

    t = Table("method", "arms (heads)", "presets", "description")
    for s in list_learners("class_incremental"):
        t.add_row(s.name, ", ".join(s.heads), ", ".join(s.presets) or "-", s.description[:80])
    console.print(t)


def _options(method: str, preset: str | None, pairs: list[str]) -> dict[str, Any]:
    from methods.continual.learner import get_learner

    spec = get_learner(method)
    if preset is not None and preset not in spec.presets:
        raise typer.BadParameter(f"unknown preset {preset!r}; {method} has: {', '.join(spec.presets) or 'none'}")
    return parse_kv(pairs, spec.presets.get(preset, {}) if preset else None)


def _show(result: JobResult) -> None:
    """Every arm's A_f, Ā, forgetting and old/new accuracies (mean ± std over seeds)."""
    report = result.report
    agg = report.data["experiment"]["aggregate"]
    t = Table(
        "arm",
        "A_f (%)",
        "Ā (%)",
        "forgetting (%)",
        "old (%)",
        "new (%)",
        "new−old (%)",
        title=f"{report.title} — job {result.job_id}",
    )

    def pct(pair: list[float]) -> str:
        return "n/a" if pair[0] is None or pair[0] != pair[0] else f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"

    for head, m in agg.items():
        t.add_row(head, *(pct(m[k]) for k in ("A_f", "A_bar", "forgetting", "old_acc", "new_acc", "gap")))
    console.print(t)


@continual_app.command("run")
def run(
    method: Annotated[str, typer.Argument(help="A harness method, e.g. dpcr.")],
    preset: Annotated[str | None, typer.Option(help="A named option set of the method (e.g. quick).")] = None,
    seeds: Annotated[int, typer.Option(min=1, max=10)] = 1,
    samples_per_class: Annotated[int | None, typer.Option(min=2, help="Cap training samples per class.")] = None,
    tasks: Annotated[int | None, typer.Option(min=1, help="Stop after this many tasks.")] = None,
    dataset: Annotated[str, typer.Option()] = "digits",
    option: Annotated[list[str], typer.Option("--option", "-o", help="Method option key=value (JSON).")] = [],  # noqa: B006
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API and follow the job.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
) -> None:
    """Run METHOD task by task over SEEDS seeds and print every arm's A_f, Ā, forgetting and old/new gap."""
    try:
        options = _options(method, preset, option)
    except KeyError as exc:
        raise typer.Exit(code=fail(exc.args[0])) from None
    params = {
        "method": method,
        "dataset": dataset,
        "seeds": seeds,
        "n_tasks": tasks,
        "samples_per_class": samples_per_class,
        "options": options,
    }
    raise typer.Exit(
        code=run_job(
            "continual.run",
            params | device_params(device, amp),
            remote=remote,
            out=out,
            show=_show,
            title=f"continual {method}",
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(continual_app, name="continual")
