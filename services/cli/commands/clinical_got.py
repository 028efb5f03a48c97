"""Clinical GoT on the command line: the ``paperworks clinical`` group of ``agents/clinical_got``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks clinical case [CASE] [--mode cgot|direct] [--model M] [--oracle n1 ...] [--remote]`` — one case's
  per-node trace (``clinical_got.case``);
* ``paperworks clinical run [--mode cgot|direct] [--cases 5] [--fan-out inline|jobs] [--remote]`` — an arm over
  the first cases with all six task metrics (``clinical_got.run``).

Hand-written: ``paperworks clinical cases [--json]``, the synthetic cases and their labels (a listing whose
benchmark options are ``clinical_got.case``'s). ``paperworks reproduce clinical_got`` regenerates
``docs/results/clinical_got.md``.
"""

from __future__ import annotations

from typing import Any

from services.cli.entries import MethodCommands
from services.cli.jobrun import JobResult
from services.cli.listing import Json, print_rows, stdout_console

clinical = MethodCommands(
    "clinical_got", name="clinical", help="Clinical Graph-of-Thoughts on the synthetic HIE-Reasoning stand-in."
)


def _show(result: JobResult) -> None:
    rep = result.report
    out = stdout_console()
    out.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables:
        out.print(table.to_markdown())


clinical.entry("clinical_got.case", arguments=("case_id",), aliases={"oracle_nodes": ("--oracle",)}, show=_show)
clinical.entry("clinical_got.run", aliases={"n_cases": ("--cases",), "oracle_nodes": ("--oracle",)}, show=_show)


@clinical.command("cases", model="agents.clinical_got.jobs:CaseParams", fields=("n_cases", "seed"))
def cases(limit: int = 20, as_json: Json = False, **bench: Any) -> None:
    """List the first synthetic cases: pattern, grade, lesion %, score, outcome (the benchmark of --n-cases/--seed)."""
    from methods.clinical_got.bench import prepare_case
    from methods.clinical_got.config import BenchConfig

    config = BenchConfig(**bench)
    rows = []
    for cid in config.case_ids()[:limit]:
        tr = prepare_case(config, cid).truth
        rows.append(
            [cid, tr["pattern"], tr["grade"], round(100 * tr["lesion_p"], 2), tr["score"], tr["outcome"],
             len(tr["injured"])]
        )  # fmt: skip
    print_rows(
        ["case", "pattern", "grade", "lesion %", "score", "outcome", "injured ROIs"],
        rows,
        as_json=as_json,
        keys=["case_id", "pattern", "grade", "lesion_pct", "score", "outcome", "n_injured"],
    )


def register(app) -> None:
    clinical.register(app)
