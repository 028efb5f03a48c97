"""Double-Filter on the command line: the ``paperworks double-filter`` group of ``methods/double_filter``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks double-filter patches --rho 0.5 --count 6 --out kept.png`` — IPF's kept patches on test scenes
  (``--out`` writes the overlay PNG; ``--report`` the Markdown);
* ``paperworks double-filter experiment --tasks vqa,nlvr --seeds 3`` — no filter / IPF / ALF / both per task.

Jobs run in this process with a progress bar, or ``--remote`` through the API; ``paperworks reproduce
double_filter`` writes the results.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands, Output
from services.cli.jobrun import JobResult
from services.cli.listing import stdout_console

double_filter = MethodCommands(
    "double_filter", name="double-filter", help="Double-Filter: patch & layer filtering of a vision-language model."
)


def _show_patches(result: JobResult) -> None:
    """Which patches each scene kept (foreground/background counts)."""
    rep = result.report
    out = stdout_console()
    out.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for row in rep.tables[0].rows:
        out.print(f"scene {row[0]}: kept [{row[3]}] ({row[4]} foreground, {row[5]} background)")


double_filter.entry(
    "double_filter.patches",
    outputs=(Output("--out", "kept_patches.png", "Write the overlay PNG here."),),
    show=_show_patches,
)


def register(app) -> None:
    double_filter.register(app)
