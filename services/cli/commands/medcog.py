"""MultiCogEval on the command line: the ``paperworks medcog`` group (``methods/medcog``, ``agents/medcog``).

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks medcog lowmid [--model M] [--dataset medqa] [--items 2] [--repeats 5] [--mode inline|jobs]``;
* ``paperworks medcog high [--model M] [--disease D ...] [--cases 1] [--remote]``.

Hand-written: ``paperworks medcog diseases [--json]``, the diseases with synthetic cases.
``paperworks reproduce medcog`` regenerates ``docs/results/medcog.md``.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands
from services.cli.jobrun import JobResult
from services.cli.listing import Json, print_rows, stdout_console

medcog = MethodCommands("medcog", help="MultiCogEval: low/mid/high cognitive-level medical evaluation.")


@medcog.command("diseases")
def diseases(as_json: Json = False) -> None:
    """List the diseases with synthetic high-level cases."""
    from methods.medcog.cases import DISEASES, make_case

    rows = []
    for d in DISEASES:
        c = make_case(d, 0)
        rows.append([d, len(c.labs), len(c.micro), sorted(c.radiology) if as_json else ", ".join(c.radiology)])
    print_rows(["disease", "labs", "micro", "imaging"], rows, as_json=as_json)


def _show(result: JobResult) -> None:
    rep = result.report
    out = stdout_console()
    out.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables:
        out.print(table.to_markdown())


medcog.entry("medcog.lowmid", aliases={"datasets": ("--dataset",), "n_items": ("--items",)}, show=_show)
medcog.entry("medcog.high", aliases={"diseases": ("--disease",), "cases_per_disease": ("--cases",)}, show=_show)


def register(app) -> None:
    medcog.register(app)
