"""SEFE on the command line (the ``paperworks sefe`` group of ``methods/sefe``).

* ``paperworks sefe run --arm seq --arm sefe --task iris --task cancer --seeds 0 [--remote]`` — the
  ``sefe.run`` job: accuracy / format-compliance matrices per arm
* ``paperworks sefe asd --task wine --x 20`` — preview ASD's rewritten training examples (no model)

``paperworks reproduce sefe`` regenerates ``docs/results/sefe.md``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from services.cli.jobrun import Amp, Device, device_params, run_job
from services.cli.progress import console

TASKS = ["iris", "cancer"]
sefe_app = typer.Typer(
    help="SEFE: superficial and essential forgetting in continual instruction tuning.", no_args_is_help=True
)


@sefe_app.command("run")
def run(
    arm: Annotated[list[str], typer.Option(help="seq, asd, reglora, sefe, multitask (repeatable).")] = ["seq", "sefe"],  # noqa: B006
    task: Annotated[list[str], typer.Option(help="iris, cancer, wine, digits, in order (repeatable).")] = TASKS,
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0",
    n_train: Annotated[int, typer.Option(help="Training examples per task (≤ 600).")] = 32,
    n_test: Annotated[int, typer.Option(help="Test items per task (≤ 150).")] = 20,
    epochs: Annotated[int, typer.Option(help="Epochs per task.")] = 2,
    adapt_layers: Annotated[int, typer.Option(help="LoRA on the top k of 30 layers.")] = 4,
    lam: Annotated[float, typer.Option(help="RegLoRA λ.")] = 2.5e3,
    x: Annotated[float, typer.Option(help="ASD proportion X (%).")] = 20.0,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit to the API and follow the job.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
) -> None:
    """Train the arms on the task sequence and print MFT / MFN / MAA / BWT and format compliance."""
    try:
        seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        raise typer.BadParameter(f"seeds must be integers separated by commas, got {seeds!r}") from None
    params = {
        "arms": arm,
        "tasks": task,
        "seeds": seed_list,
        "n_train": n_train,
        "n_test": n_test,
        "epochs": epochs,
        "adapt_layers": adapt_layers,
        "lam": lam,
        "asd_percent": x,
    }
    raise typer.Exit(code=run_job("sefe.run", params | device_params(device, amp), remote=remote, out=out))


@sefe_app.command("asd")
def asd(
    task: Annotated[str, typer.Option(help="iris, cancer, wine or digits.")] = "iris",
    x: Annotated[float, typer.Option(help="ASD proportion X (%).")] = 20.0,
    n_train: Annotated[int, typer.Option(help="Training examples.")] = 40,
    seed: int = 0,
    show: Annotated[int, typer.Option(help="Rewritten examples to print.")] = 4,
) -> None:
    """Rewrite a task's training data with ASD and show the style counts and a few examples."""
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
    console.print(table)
    for e in [e for e in ex if e.transformed][:show]:
        console.print(f"[bold]{e.style}[/bold]\n{e.prompt}\n[green]→ {e.answer}[/green]\n")


def register(app: typer.Typer) -> None:
    app.add_typer(sefe_app, name="sefe")
