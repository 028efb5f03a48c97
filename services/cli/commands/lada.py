"""LADA / X-TAIL on the command line: the ``paperworks lada`` group of ``methods/lada``.

* ``paperworks lada run [lada|xtail_zeroshot|xtail_finetune|xtail_lwf|xtail_rail] --seeds 3 [-o key=value] [--remote]``
  — the ``lada.xtail`` job (options generated from ``XTailParams``; ``lada xtail`` is the same command), then
  Transfer/Average/Last;
* ``paperworks lada domains [--json]`` — the stream's domains (order I) and their classes.

``paperworks reproduce lada`` regenerates ``docs/results/lada.md``.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands
from services.cli.jobrun import JobResult
from services.cli.listing import Json, print_rows

lada = MethodCommands("lada", help="LADA: label-specific CLIP adapter, X-TAIL protocol.")


@lada.command("domains")
def domains(as_json: Json = False) -> None:
    """List the synthetic X-TAIL domains and their class names."""
    from methods.lada.domains import DOMAIN_ORDER, _domain_classes

    names = _domain_classes()
    rows = [[i + 1, d, list(names[d]) if as_json else ", ".join(names[d])] for i, d in enumerate(DOMAIN_ORDER)]
    print_rows(["step", "domain", "classes"], rows, as_json=as_json)


def _show(result: JobResult) -> None:
    agg = result.report.data["experiment"]["aggregate"]

    def pct(pair: list[float]) -> str:
        return "n/a" if pair[0] is None or pair[0] != pair[0] else f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"

    print_rows(
        ["head", "Transfer (%)", "Average (%)", "Last (%)"],
        [[h, pct(m["transfer"]), pct(m["average"]), pct(m["last"])] for h, m in agg.items()],
        title=f"{result.report.title} — job {result.job_id}",
    )


lada.entry(
    "lada.xtail",
    names=("xtail", "run"),
    help="Learn the domains one after another; print Transfer / Average / Last over the union label space "
    "(also `paperworks lada run`).",
    arguments=("method",),
    aliases={"options": ("--option", "-o")},
    show=_show,
    title=lambda p: f"X-TAIL {p.get('method', 'lada')}",
)


def register(app) -> None:
    lada.register(app)
