"""MultiCogEval on the command line.

* ``paperworks medcog lowmid [--model M] [--dataset medqa] [--items 2] [--repeats 5] [--mode inline|jobs] [--remote]``
* ``paperworks medcog high [--model M] [--disease D ...] [--cases 1] [--remote]``
* ``paperworks medcog diseases`` — the diseases with synthetic cases.

``paperworks reproduce medcog`` regenerates ``docs/results/medcog.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from services.cli.jobrun import JobResult, run_job
from services.cli.progress import console

medcog_app = typer.Typer(help="MultiCogEval: low/mid/high cognitive-level medical evaluation.", no_args_is_help=True)
Model = Annotated[str | None, typer.Option(help="litellm model string (default: the configured model).")]
Remote = Annotated[bool, typer.Option(help="Submit to the API and follow the job.")]
Out = Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")]


@medcog_app.command("lowmid")
def lowmid(
    model: Model = None,
    dataset: Annotated[list[str], typer.Option(help="medqa and/or medmcqa.")] = ["medqa"],  # noqa: B006
    items: Annotated[int, typer.Option(help="Items per task.")] = 2,
    repeats: Annotated[int, typer.Option(help="Repeats with fresh demos (paper: 5).")] = 5,
    mode: Annotated[
        str, typer.Option(help="inline, or jobs: llm_eval.batch fan-out to the workers (with --remote).")
    ] = "inline",
    remote: Remote = False,
    out: Out = None,
) -> None:
    """MCQ (low) and SV / AE / MR (mid) with chance-normalised scores."""
    params = {"model": model, "datasets": dataset, "n_items": items, "repeats": repeats, "mode": mode}
    raise typer.Exit(code=run_job("medcog.lowmid", params, remote=remote, out=out, show=_show))


@medcog_app.command("high")
def high(
    model: Model = None,
    disease: Annotated[list[str], typer.Option(help="Diseases (see `paperworks medcog diseases`).")] = ["Pancreatitis"],  # noqa: B006
    cases: Annotated[int, typer.Option(help="Synthetic cases per disease.")] = 1,
    max_turns: int = 30,
    remote: Remote = False,
    out: Out = None,
) -> None:
    """The interactive-diagnosis simulator; strict score per disease."""
    params = {"model": model, "diseases": disease, "cases_per_disease": cases, "max_turns": max_turns}
    raise typer.Exit(code=run_job("medcog.high", params, remote=remote, out=out, show=_show))


@medcog_app.command("diseases")
def diseases() -> None:
    """List the diseases with synthetic high-level cases."""
    from methods.medcog.cases import DISEASES, make_case

    t = Table("disease", "labs", "micro", "imaging")
    for d in DISEASES:
        c = make_case(d, 0)
        t.add_row(d, str(len(c.labs)), str(len(c.micro)), ", ".join(c.radiology))
    console.print(t)


def _show(result: JobResult) -> None:
    rep = result.report
    console.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables:
        t = Table(*table.columns, title=table.title)
        for row in table.rows:
            t.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
        console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(medcog_app, name="medcog")
