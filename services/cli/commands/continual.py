"""Class-incremental runs on the command line: the ``paperworks continual`` group of ``methods/continual``.

* ``paperworks continual run dpcr --preset quick --seeds 2 --samples-per-class 32 [-o key=value] [--remote]``
  — the ``continual.run`` job (options generated from ``ContinualParams``; ``--preset`` is the method's
  named option set, hand-written here because it depends on the method), then the arm table;
* ``paperworks continual methods [--json]`` — registered harness methods, their arms (heads) and presets.

``paperworks reproduce dpcr`` regenerates ``docs/results/dpcr.md``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from services.cli.entries import Extra, MethodCommands
from services.cli.jobrun import JobResult
from services.cli.listing import Json, print_rows

continual = MethodCommands("continual", help="Class-incremental learning harness (DPCR, ...).")


@continual.command("methods")
def methods(as_json: Json = False) -> None:
    """List the continual methods the harness can run."""
    from methods.continual.learner import list_learners

    rows = [[s.name, list(s.heads), list(s.presets), s.description] for s in list_learners("class_incremental")]
    if not as_json:
        rows = [[n, ", ".join(h), ", ".join(p) or "-", d] for n, h, p, d in rows]
    print_rows(
        ["method", "arms (heads)", "presets", "description"],
        rows,
        as_json=as_json,
        keys=["name", "heads", "presets", "description"],
    )


def _with_preset(params: dict[str, Any], preset: str) -> dict[str, Any]:
    """The learner's named option set under the options given with ``-o`` (which win)."""
    from methods.continual.learner import get_learner

    method = params.get("method") or "dpcr"
    spec = get_learner(method)
    if preset not in spec.presets:
        raise ValueError(f"unknown preset {preset!r}; {method} has: {', '.join(spec.presets) or 'none'}")
    return {**params, "options": {**spec.presets[preset], **params.get("options", {})}}


def _show(result: JobResult) -> None:
    """Every arm's A_f, Ā, forgetting and old/new accuracies (mean ± std over seeds)."""
    agg = result.report.data["experiment"]["aggregate"]

    def pct(pair: list[float]) -> str:
        return "n/a" if pair[0] is None or pair[0] != pair[0] else f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"

    print_rows(
        ["arm", "A_f (%)", "Ā (%)", "forgetting (%)", "old (%)", "new (%)", "new−old (%)"],
        [
            [h, *(pct(m[k]) for k in ("A_f", "A_bar", "forgetting", "old_acc", "new_acc", "gap"))]
            for h, m in agg.items()
        ],
        title=f"{result.report.title} — job {result.job_id}",
    )


continual.entry(
    "continual.run",
    arguments=("method",),
    aliases={"n_tasks": ("--tasks",), "options": ("--option", "-o")},
    extras=(
        Extra(
            "preset",
            Annotated[str | None, typer.Option("--preset", help="A named option set of the method (e.g. quick).")],
            None,
            _with_preset,
        ),
    ),
    show=_show,
    title=lambda p: f"continual {p.get('method', 'dpcr')}",
)


def register(app) -> None:
    continual.register(app)
