"""Class-incremental runs on the command line.

* ``paperworks continual methods`` — registered harness methods, their arms (heads) and presets;
* ``paperworks continual run dpcr --preset quick --seeds 2 --samples-per-class 32 [-o key=value]``
  — a ``continual.run`` job in this process with a progress bar, then the arm table.

``paperworks reproduce dpcr`` regenerates ``docs/results/dpcr.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from services.cli.progress import console, progress_bar

continual_app = typer.Typer(help="Class-incremental learning harness (DPCR, ...).", no_args_is_help=True)


@continual_app.command("methods")
def methods() -> None:
    """List the continual methods the harness can run."""
    from methods.continual.learner import list_learners

    t = Table("method", "arms (heads)", "presets", "description")
    for s in list_learners():
        t.add_row(s.name, ", ".join(s.heads), ", ".join(s.presets) or "-", s.description[:80])
    console.print(t)


def _options(method: str, preset: str | None, pairs: list[str]) -> dict[str, Any]:
    from methods.continual.learner import get_learner

    spec = get_learner(method)
    if preset is not None and preset not in spec.presets:
        raise typer.BadParameter(f"unknown preset {preset!r}; {method} has: {', '.join(spec.presets) or 'none'}")
    options = dict(spec.presets.get(preset, {})) if preset else {}
    for pair in pairs:
        if "=" not in pair:
            raise typer.BadParameter(f"expected key=value, got {pair!r}")
        k, v = pair.split("=", 1)
        try:
            options[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            options[k.strip()] = v
    return options


@continual_app.command("run")
def run(method: Annotated[str, typer.Argument(help="A harness method, e.g. dpcr.")],
        preset: Annotated[str | None, typer.Option(help="A named option set of the method (e.g. quick).")] = None,
        seeds: Annotated[int, typer.Option(min=1, max=10)] = 1,
        samples_per_class: Annotated[int | None, typer.Option(min=2, help="Cap training samples per class.")] = None,
        tasks: Annotated[int | None, typer.Option(min=1, help="Stop after this many tasks.")] = None,
        dataset: Annotated[str, typer.Option()] = "digits",
        option: Annotated[list[str], typer.Option("--option", "-o", help="Method option key=value (JSON).")] = [],  # noqa: B006
        out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None) -> None:
    """Run METHOD task by task over SEEDS seeds and print every arm's A_f, Ā, forgetting and old/new gap."""
    from core.db import crud, migrate
    from core.db.session import session_scope
    from core.jobs.lifecycle import run_inline
    from core.jobs.registry import InvalidParams
    from core.jobs.report import Report

    try:
        params = {"method": method, "dataset": dataset, "seeds": seeds, "n_tasks": tasks,
                  "samples_per_class": samples_per_class, "options": _options(method, preset, option)}
    except KeyError as exc:
        console.print(f"[red]error:[/red] {exc.args[0]}")
        raise typer.Exit(code=2) from None
    migrate.upgrade()
    try:
        with progress_bar(f"continual {method}") as update:
            job_id, outcome = run_inline("continual.run", params, sink=update)
    except InvalidParams as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from None
    if outcome.status != "succeeded":
        console.print(f"job {job_id}: [bold red]{outcome.status}[/bold red] {outcome.error or ''}")
        raise typer.Exit(code=1)
    with session_scope() as s:
        report = Report.model_validate(crud.get_report_for_job(s, job_id=job_id).body)
    agg = report.data["experiment"]["aggregate"]
    t = Table("arm", "A_f (%)", "Ā (%)", "forgetting (%)", "old (%)", "new (%)", "new−old (%)",
              title=f"{report.title} — job {job_id}")

    def pct(pair: list[float]) -> str:
        return "n/a" if pair[0] is None or pair[0] != pair[0] else f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"

    for head, m in agg.items():
        t.add_row(head, *(pct(m[k]) for k in ("A_f", "A_bar", "forgetting", "old_acc", "new_acc", "gap")))
    console.print(t)
    if out:
        out.write_text(report.to_markdown(lambda ref: f"artifact:{ref.id}"), encoding="utf-8")
        console.print(f"report written to {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(continual_app, name="continual")
