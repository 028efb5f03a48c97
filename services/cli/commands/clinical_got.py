"""Clinical GoT on the command line.

* ``paperworks clinical cases [--n-cases 133] [--seed 0] [--limit 20]`` — the synthetic cases and their labels;
* ``paperworks clinical case CASE [--mode cgot|direct] [--model M] [--oracle n1 ...] [--remote]`` — one case's
  per-node trace;
* ``paperworks clinical run [--mode cgot|direct] [--cases 5] [--fan-out inline|jobs] [--remote]`` — an arm over
  the first cases with all six task metrics.

``paperworks reproduce clinical_got`` regenerates ``docs/results/clinical_got.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from services.cli.jobrun import JobResult, run_job
from services.cli.progress import console

clinical_app = typer.Typer(
    help="Clinical Graph-of-Thoughts on the synthetic HIE-Reasoning stand-in.", no_args_is_help=True
)
Model = Annotated[str | None, typer.Option(help="litellm model string (default: the configured model).")]
Mode = Annotated[str, typer.Option(help="cgot (the graph) or direct (the baseline).")]
Remote = Annotated[bool, typer.Option(help="Submit to the API and follow the job.")]
Out = Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")]
Oracle = Annotated[list[str], typer.Option(help="Nodes answered with the ground truth (n1..n4).")]


@clinical_app.command("cases")
def cases(n_cases: int = 133, seed: int = 0, limit: int = 20) -> None:
    """List the first synthetic cases: pattern, grade, lesion %, score, outcome."""
    from methods.clinical_got.bench import prepare_case
    from methods.clinical_got.config import BenchConfig

    bench = BenchConfig(n_cases=n_cases, seed=seed)
    t = Table("case", "pattern", "grade", "lesion %", "score", "outcome", "injured ROIs")
    for cid in bench.case_ids()[:limit]:
        tr = prepare_case(bench, cid).truth
        t.add_row(
            cid,
            tr["pattern"],
            str(tr["grade"]),
            f"{100 * tr['lesion_p']:.2f}",
            str(tr["score"]),
            str(tr["outcome"]),
            str(len(tr["injured"])),
        )
    console.print(t)


@clinical_app.command("case")
def case(
    case_id: Annotated[str, typer.Argument(help="case000…")] = "case000",
    mode: Mode = "cgot",
    model: Model = None,
    oracle: Oracle = [],  # noqa: B006
    n_cases: int = 133,
    seed: int = 0,
    remote: Remote = False,
    out: Out = None,
) -> None:
    """One case through the graph: every node's answer beside the ground truth."""
    params = {
        "case_id": case_id,
        "mode": mode,
        "model": model,
        "oracle_nodes": oracle,
        "n_cases": n_cases,
        "seed": seed,
    }
    raise typer.Exit(code=run_job("clinical_got.case", params, remote=remote, out=out, show=_show))


@clinical_app.command("run")
def run(
    mode: Mode = "cgot",
    model: Model = None,
    cases: Annotated[int, typer.Option(help="The benchmark's first N cases.")] = 5,
    seed: int = 0,
    oracle: Oracle = [],  # noqa: B006
    fan_out: Annotated[str, typer.Option(help="inline, or jobs: clinical_got.case jobs on the workers.")] = "inline",
    remote: Remote = False,
    out: Out = None,
) -> None:
    """An arm over the first cases: the six task metrics."""
    params = {
        "mode": mode,
        "model": model,
        "n_cases": cases,
        "seed": seed,
        "oracle_nodes": oracle,
        "fan_out": fan_out,
    }
    raise typer.Exit(code=run_job("clinical_got.run", params, remote=remote, out=out, show=_show))


def _show(result: JobResult) -> None:
    rep = result.report
    console.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables:
        t = Table(*table.columns, title=table.title)
        for row in table.rows:
            t.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
        console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(clinical_app, name="clinical")
