"""LMS3 on the command line: the ``paperworks lms3`` group of ``methods/lms3``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks lms3 index DATASET [--pool-size N] [--all-representations] [--remote]`` — embed a demonstration
  pool into Chroma (``lms3.index``; a pool already indexed is skipped);
* ``paperworks lms3 select DATASET "problem" [--subject S] [--arm lms3] [-k 1] [--l 0.01] [--remote]`` — the
  chosen demonstrations with Sim, Stab and Score, whether rejection fired, and the prompt (``lms3.select``).

Hand-written: ``paperworks lms3 pools [--json]``, the pools indexed for the current local model, and the
printed selection. ``paperworks reproduce lms3`` regenerates ``docs/results/lms3.md``.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands
from services.cli.jobrun import JobResult
from services.cli.listing import Json, print_rows, stdout_console

lms3 = MethodCommands("lms3", help="LMS3 demonstration selection (index pools, select demos).")


def _show_index(result: JobResult) -> None:
    rep, m = result.report, result.report.metrics
    out = stdout_console()
    out.print(f"[bold]{rep.title}[/bold]: {rep.summary}")
    out.print(
        f"items {m['items']} · encoded now {m['encoded']} · forward passes {m['forward_passes']} · "
        f"{m['seconds']} s · model {m['model_hash']}"
    )


def _show_select(result: JobResult) -> None:
    data = result.report.data
    out = stdout_console()
    print_rows(
        ["rank", "pool index", "Sim", "Stab", "Score", "in Sim top-λ", "problem"],
        [
            [
                d["rank"] + 1,
                d["index"],
                f"{d['sim']:.3f}",
                f"{d['stab']:.3f}",
                f"{d['score']:.3f}",
                "yes" if d["in_sim_top_lambda"] else "no",
                d["problem"],
            ]
            for d in data["candidates"]
        ],  # fmt: skip
        title=f"{data.get('arm', '')} from {data['pool']} (|D| = {data['pool_size']}, λ = {data['lam']})",
    )
    out.print(
        "[bold red]rejected → zero-shot prompt[/bold red]"
        if data["rejected"]
        else f"{len(data['demos'])} demonstration(s) kept"
    )
    out.rule("prompt")
    out.print(data["prompt"], markup=False, highlight=False)
    if "completion" in data:
        out.rule("model output")
        out.print(data["completion"], markup=False, highlight=False)


lms3.entry("lms3.index", arguments=("dataset",), show=_show_index)
lms3.entry("lms3.select", arguments=("dataset", "query"), aliases={"k": ("-k",)}, show=_show_select)


@lms3.command("pools")
def pools(as_json: Json = False) -> None:
    """List the pools indexed for the current local model."""
    from core.llm import model_hash
    from core.vectorstore import get_vectorstore
    from methods.lms3.pool import indexed_pools

    rows = [[p.pool, p.mode, p.layer, p.items] for p in indexed_pools(get_vectorstore(), model_hash())]
    print_rows(["pool", "mode", "layer", "items"], rows, as_json=as_json)


def register(app) -> None:
    lms3.register(app)
