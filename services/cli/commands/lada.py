"""LADA / X-TAIL on the command line (the ``paperworks lada`` group of ``methods/lada``).

* ``paperworks lada domains`` — the stream's domains (order I) and their classes;
* ``paperworks lada run [lada|xtail_zeroshot|xtail_finetune|xtail_lwf|xtail_rail] --seeds 3 [-o key=value] [--remote]``
  — a ``lada.xtail`` job in this process with a progress bar (or through the API), then Transfer/Average/Last.

``paperworks reproduce lada`` regenerates ``docs/results/lada.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from services.cli.jobrun import Amp, Device, JobResult, device_params, parse_kv, run_job
from services.cli.progress import console

lada_app = typer.Typer(help="LADA: label-specific CLIP adapter, X-TAIL protocol.", no_args_is_help=True)


@lada_app.command("domains")
def domains() -> None:
    """List the synthetic X-TAIL domains and their class names."""
    from methods.lada.domains import DOMAIN_ORDER, _domain_classes

    names = _domain_classes()
    t = Table("step", "domain", "classes")
    for i, d in enumerate(DOMAIN_ORDER):
        t.add_row(str(i + 1), d, ", ".join(names[d]))
    console.print(t)


def _show(result: JobResult) -> None:
    agg = result.report.data["experiment"]["aggregate"]
    t = Table("head", "Transfer (%)", "Average (%)", "Last (%)", title=f"{result.report.title} — job {result.job_id}")

    def pct(pair: list[float]) -> str:
        return "n/a" if pair[0] is None or pair[0] != pair[0] else f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"

    for head, m in agg.items():
        t.add_row(head, pct(m["transfer"]), pct(m["average"]), pct(m["last"]))
    console.print(t)


@lada_app.command("run")
def run(
    method: Annotated[
        str, typer.Argument(help="lada, xtail_zeroshot, xtail_finetune, xtail_lwf or xtail_rail.")
    ] = "lada",
    seeds: Annotated[int, typer.Option(min=1, max=10)] = 1,
    shots: Annotated[int, typer.Option(min=1, max=48, help="Training images per class.")] = 16,
    preset: Annotated[str, typer.Option(help="spec, cpu or quick (the method's named options).")] = "cpu",
    backbone: Annotated[str, typer.Option(help="Tiny-CLIP preset: default or test.")] = "default",
    option: Annotated[list[str], typer.Option("--option", "-o", help="Method option key=value (JSON).")] = [],  # noqa: B006
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API and follow the job.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
) -> None:
    """Learn the domains one after another; print Transfer / Average / Last over the union label space."""
    params = {
        "method": method,
        "seeds": seeds,
        "shots": shots,
        "preset": preset,
        "backbone": backbone,
        "options": parse_kv(option),
    }
    raise typer.Exit(
        code=run_job(
            "lada.xtail",
            params | device_params(device, amp),
            remote=remote,
            out=out,
            show=_show,
            title=f"X-TAIL {method}",
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(lada_app, name="lada")
