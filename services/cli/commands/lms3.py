"""LMS3 on the command line.

* ``paperworks lms3 index DATASET [--pool-size N] [--all-representations] [--remote]`` — embed a
  demonstration pool into Chroma as an ``lms3.index`` job (in this process with a progress bar,
  or through the API with ``--remote``); a pool already indexed is skipped;
* ``paperworks lms3 select DATASET "problem" [--subject S] [--arm lms3] [-k 1] [--l 0.01] [--remote]`` — the
  chosen demonstrations with Sim, Stab and Score, whether rejection fired, and the prompt;
* ``paperworks lms3 pools`` — the pools indexed for the current local model.

``paperworks reproduce lms3`` regenerates ``docs/results/lms3.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from services.cli.jobrun import Amp, Device, JobResult, device_params, run_job
from services.cli.progress import console

lms3_app = typer.Typer(help="LMS3 demonstration selection (index pools, select demos).", no_args_is_help=True)

DatasetArg = Annotated[str, typer.Argument(help="gsm8k, mawps or math (its train split is the pool).")]
PoolSize = Annotated[int | None, typer.Option(help="Seeded subset size (per subject for MATH); default: full.")]


@lms3_app.command("index")
def index(
    dataset: DatasetArg,
    pool_size: PoolSize = None,
    seed: int = 0,
    mode: Annotated[str, typer.Option(help="reference, last_token or eos_appended.")] = "reference",
    layer: Annotated[str, typer.Option(help="final_norm_output or last_layer_attn_input.")] = "final_norm_output",
    all_representations: Annotated[bool, typer.Option(help="Index every mode and layer.")] = False,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit to the API and follow the job.")] = False,
) -> None:
    """Embed DATASET's demonstration pool once (x, P·x, Stab per item) into Chroma."""
    params = {
        "dataset": dataset,
        "pool_size": pool_size,
        "seed": seed,
        "mode": mode,
        "layer": layer,
        "all_representations": all_representations,
    }
    raise typer.Exit(code=run_job("lms3.index", params | device_params(device, amp), remote=remote, show=_show_index))


def _show_index(result: JobResult) -> None:
    rep, m = result.report, result.report.metrics
    console.print(f"[bold]{rep.title}[/bold]: {rep.summary}")
    console.print(
        f"items {m['items']} · encoded now {m['encoded']} · forward passes {m['forward_passes']} · "
        f"{m['seconds']} s · model {m['model_hash']}"
    )


@lms3_app.command("select")
def select(
    dataset: DatasetArg,
    query: Annotated[str, typer.Argument(help="The problem to solve.")],
    subject: Annotated[str, typer.Option(help="MATH subject (required for math).")] = "",
    arm: Annotated[
        str, typer.Option(help="lms3 or a baseline: zero_shot, random, cosine, sim_only, stab_only, score_no_reject.")
    ] = "lms3",
    k: Annotated[int, typer.Option("-k", help="Demonstrations (Score top-k).")] = 1,
    l: Annotated[float, typer.Option("--l", help="Rejection fraction, λ = int(l·|D|).")] = 0.01,  # noqa: E741
    min_lambda: int = 0,
    pool_size: PoolSize = None,
    seed: int = 0,
    orientation: Annotated[str, typer.Option(help="reference (W̃_K W_Q) or attention (W̃_Kᵀ W_Q).")] = "reference",
    index_if_missing: bool = False,
    generate: bool = False,
    max_new_tokens: int = 128,
    out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit to the API and follow the job.")] = False,
) -> None:
    """Choose demonstrations for QUERY from DATASET's indexed pool and print the prompt."""
    params = {
        "dataset": dataset,
        "query": query,
        "subject": subject,
        "arm": arm,
        "k": k,
        "l": l,
        "min_lambda": min_lambda,
        "pool_size": pool_size,
        "seed": seed,
        "orientation": orientation,
        "index_if_missing": index_if_missing,
        "generate": generate,
        "max_new_tokens": max_new_tokens,
    }
    raise typer.Exit(
        code=run_job(
            "lms3.select",
            params | device_params(device, amp),
            remote=remote,
            out=out,
            show=lambda r: _show_select(r, arm),
        )
    )


def _show_select(result: JobResult, arm: str) -> None:
    data = result.report.data
    t = Table(
        "rank",
        "pool index",
        "Sim",
        "Stab",
        "Score",
        "in Sim top-λ",
        "problem",
        title=f"{arm} from {data['pool']} (|D| = {data['pool_size']}, λ = {data['lam']})",
    )
    for d in data["candidates"]:
        t.add_row(
            str(d["rank"] + 1),
            str(d["index"]),
            f"{d['sim']:.3f}",
            f"{d['stab']:.3f}",
            f"{d['score']:.3f}",
            "yes" if d["in_sim_top_lambda"] else "no",
            d["problem"][:70],
        )
    console.print(t)
    console.print(
        "[bold red]rejected → zero-shot prompt[/bold red]"
        if data["rejected"]
        else f"{len(data['demos'])} demonstration(s) kept"
    )
    console.rule("prompt")
    console.print(data["prompt"], markup=False, highlight=False)
    if "completion" in data:
        console.rule("model output")
        console.print(data["completion"], markup=False, highlight=False)


@lms3_app.command("pools")
def pools() -> None:
    """List the pools indexed for the current local model."""
    from core.llm import model_hash
    from core.vectorstore import get_vectorstore
    from methods.lms3.pool import indexed_pools

    t = Table("pool", "mode", "layer", "items")
    for p in indexed_pools(get_vectorstore(), model_hash()):
        t.add_row(p.pool, p.mode, p.layer, str(p.items))
    console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(lms3_app, name="lms3")
