"""LMS3 on the command line.

* ``paperworks lms3 index DATASET [--pool-size N] [--all-representations] [--remote]`` — embed a
  demonstration pool into Chroma as an ``lms3.index`` job (in this process with a progress bar,
  or through the API with ``--remote``); a pool already indexed is skipped;
* ``paperworks lms3 select DATASET "problem" [--subject S] [--arm lms3] [-k 1] [--l 0.01]`` — the
  chosen demonstrations with Sim, Stab and Score, whether rejection fired, and the prompt;
* ``paperworks lms3 pools`` — the pools indexed for the current local model.

``paperworks reproduce lms3`` regenerates ``docs/results/lms3.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from services.cli.progress import console, progress_bar

lms3_app = typer.Typer(help="LMS3 demonstration selection (index pools, select demos).", no_args_is_help=True)

DatasetArg = Annotated[str, typer.Argument(help="gsm8k, mawps or math (its train split is the pool).")]
PoolSize = Annotated[int | None, typer.Option(help="Seeded subset size (per subject for MATH); default: full.")]


def _run(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run a job in this process with a progress bar; exit 2 on bad params, 1 on failure."""
    from core.db import crud, migrate
    from core.db.session import session_scope
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
        console.print(f"job {job_id}: [bold red]{outcome.status}[/bold red] {outcome.error or ''}")
        raise typer.Exit(code=1)
    with session_scope() as s:
        return crud.get_report_for_job(s, job_id=job_id).body


@lms3_app.command("index")
def index(dataset: DatasetArg, pool_size: PoolSize = None, seed: int = 0,
          mode: Annotated[str, typer.Option(help="reference, last_token or eos_appended.")] = "reference",
          layer: Annotated[str, typer.Option(help="final_norm_output or last_layer_attn_input.")] = "final_norm_output",
          all_representations: Annotated[bool, typer.Option(help="Index every mode and layer.")] = False,
          remote: Annotated[bool, typer.Option(help="Submit to the API and follow the job.")] = False) -> None:
    """Embed DATASET's demonstration pool once (x, P·x, Stab per item) into Chroma."""
    params = {"dataset": dataset, "pool_size": pool_size, "seed": seed, "mode": mode, "layer": layer,
              "all_representations": all_representations}
    if remote:
        from services.cli.remote import run_remote

        raise typer.Exit(code=run_remote("lms3.index", params, None))
    body = _run("lms3.index", params)
    m = body["metrics"]
    console.print(f"[bold]{body['title']}[/bold]: {body['summary']}")
    console.print(f"items {m['items']} · encoded now {m['encoded']} · forward passes {m['forward_passes']} · "
                  f"{m['seconds']} s · model {m['model_hash']}")


@lms3_app.command("select")
def select(dataset: DatasetArg, query: Annotated[str, typer.Argument(help="The problem to solve.")],
           subject: Annotated[str, typer.Option(help="MATH subject (required for math).")] = "",
           arm: Annotated[str, typer.Option(help="lms3 or a baseline: zero_shot, random, cosine, sim_only, "
                                                  "stab_only, score_no_reject.")] = "lms3",
           k: Annotated[int, typer.Option("-k", help="Demonstrations (Score top-k).")] = 1,
           l: Annotated[float, typer.Option("--l", help="Rejection fraction, λ = int(l·|D|).")] = 0.01,  # noqa: E741
           min_lambda: int = 0, pool_size: PoolSize = None, seed: int = 0,
           orientation: Annotated[str, typer.Option(help="reference (W̃_K W_Q) or attention (W̃_Kᵀ W_Q).")] = "reference",
           index_if_missing: bool = False, generate: bool = False, max_new_tokens: int = 128,
           out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None) -> None:
    """Choose demonstrations for QUERY from DATASET's indexed pool and print the prompt."""
    params = {"dataset": dataset, "query": query, "subject": subject, "arm": arm, "k": k, "l": l,
              "min_lambda": min_lambda, "pool_size": pool_size, "seed": seed, "orientation": orientation,
              "index_if_missing": index_if_missing, "generate": generate, "max_new_tokens": max_new_tokens}
    body = _run("lms3.select", params)
    data = body["data"]
    t = Table("rank", "pool index", "Sim", "Stab", "Score", "in Sim top-λ", "problem",
              title=f"{arm} from {data['pool']} (|D| = {data['pool_size']}, λ = {data['lam']})")
    for d in data["candidates"]:
        t.add_row(str(d["rank"] + 1), str(d["index"]), f"{d['sim']:.3f}", f"{d['stab']:.3f}", f"{d['score']:.3f}",
                  "yes" if d["in_sim_top_lambda"] else "no", d["problem"][:70])
    console.print(t)
    console.print("[bold red]rejected → zero-shot prompt[/bold red]" if data["rejected"]
                  else f"{len(data['demos'])} demonstration(s) kept")
    console.rule("prompt")
    console.print(data["prompt"], markup=False, highlight=False)
    if "completion" in data:
        console.rule("model output")
        console.print(data["completion"], markup=False, highlight=False)
    if out:
        from core.jobs.report import Report

        out.write_text(Report.model_validate(body).to_markdown(), encoding="utf-8")
        console.print(f"report written to {out}")


@lms3_app.command("pools")
def pools() -> None:
    """List the pools indexed for the current local model."""
    from methods.lms3.pool import indexed_pools
    from core.llm import model_hash
    from core.vectorstore import get_vectorstore

    t = Table("pool", "mode", "layer", "items")
    for p in indexed_pools(get_vectorstore(), model_hash()):
        t.add_row(p.pool, p.mode, p.layer, str(p.items))
    console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(lms3_app, name="lms3")
