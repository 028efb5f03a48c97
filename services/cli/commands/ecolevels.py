"""EcoLevels on the command line: the ``paperworks ecolevels`` group (``methods/ecolevels``, ``agents/ecolevels``).

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks ecolevels run [--model M] [--target resume_screener] [--probe P ...] [--remote]`` — the flow;
* ``paperworks ecolevels classify "description" [--target T]`` — level and EV (the model fills the fields);
* ``paperworks ecolevels probe --probe-id winobias`` — one probe's measurements.

Hand-written: ``paperworks ecolevels probes [--target T] [--json]``, the registry with each probe's level and
EV for a target (``--target`` is ``ecolevels.run``'s field). ``paperworks reproduce ecolevels`` regenerates
``docs/results/ecolevels.md``.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands
from services.cli.jobrun import JobResult
from services.cli.listing import Json, print_rows, stdout_console

eco = MethodCommands("ecolevels", help="EcoLevels: bias probes on level × ecological validity.")


@eco.command("probes", model="agents.ecolevels.config:FlowConfig", fields=("target",))
def probes(as_json: Json = False, *, target: str) -> None:
    """The probe registry: level (§3.2) and EV for TARGET (§3.1)."""
    from methods.ecolevels.classify import classify
    from methods.ecolevels.registry import load_probes
    from methods.ecolevels.validity import TARGETS, band, ecological_validity

    rows = []
    for p in load_probes(from_db=False):
        ev = ecological_validity(p.metadata, TARGETS[target])
        rows.append([p.id, classify(p.metadata), round(ev, 1), band(ev), bool(p.runner)])
    if not as_json:
        rows = [[i, lvl, f"{ev:.1f}", b, "yes" if r else "no"] for i, lvl, ev, b, r in rows]
    print_rows(
        ["probe", "level", "EV", "band", "runnable"],
        rows,
        as_json=as_json,
        title=f"EV for {TARGETS[target].name}",
        keys=["probe", "level", "ev", "band", "runnable"],
    )


def _show(result: JobResult) -> None:
    rep = result.report
    out = stdout_console()
    out.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables[:3]:
        out.print(table.to_markdown())


eco.entry("ecolevels.run", aliases={"probes": ("--probe",), "n_units": ("--units",)}, show=_show)
eco.entry("ecolevels.classify", arguments=("description",), show=_show)


def register(app) -> None:
    eco.register(app)
