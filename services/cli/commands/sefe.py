"""SEFE on the command line (the ``paperworks sefe`` group of ``methods/sefe``).

* ``paperworks sefe run --arm seq --arm sefe --task iris --task cancer --seeds 0 [--remote]`` — the
  ``sefe.run`` job (options generated from ``RunParams``): accuracy / format-compliance matrices per arm;
* ``paperworks sefe asd --task wine --x 20`` — a preview of ASD's rewritten training examples (no model).

``paperworks reproduce sefe`` regenerates ``docs/results/sefe.md``.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer
from rich.table import Table

from services.cli.entries import MethodCommands
from services.cli.listing import stdout_console

sefe = MethodCommands("sefe", help="SEFE: superficial and essential forgetting in continual instruction tuning.")
sefe.entry("sefe.run", aliases={"arms": ("--arm",), "tasks": ("--task",), "asd_percent": ("--x",)})


@sefe.command(
    "asd",
    model="methods.sefe.jobs:RunParams",
    fields=("asd_percent", "n_train"),
    aliases={"asd_percent": ("--x",)},
)
def asd(
    task: Annotated[str, typer.Option(help="iris, cancer, wine or digits.")] = "iris",
    seed: int = 0,
    show: Annotated[int, typer.Option(help="Rewritten examples to print.")] = 4,
    *,
    asd_percent: float,
    n_train: int,
) -> None:
    """Rewrite a task's training data with ASD and show the style counts and a few examples (a preview of what
    `sefe run` trains on: its --x and --n-train)."""
    x = asd_percent
    from methods.sefe.asd import train_examples
    from methods.sefe.tasks import TASKS

    if task not in TASKS:
        raise typer.BadParameter(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    try:
        ex = train_examples(task, n_train=n_train, seed=seed, x_percent=x)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    counts = Counter(e.style for e in ex)
    table = Table(title=f"ASD on {task} (native {TASKS[task].native}), X = {x:g} %, n = {len(ex)}")
    for s in ("YN", "MCQ", "SA", "BE", "DE"):
        table.add_column(s)
    table.add_row(*[str(counts.get(s, 0)) for s in ("YN", "MCQ", "SA", "BE", "DE")])
    out = stdout_console()
    out.print(table)
    for e in [e for e in ex if e.transformed][:show]:
        out.print(f"[bold]{e.style}[/bold]\n{e.prompt}\n[green]→ {e.answer}[/green]\n")


def register(app: typer.Typer) -> None:
    sefe.register(app)
