"""The EcoLevels flow (spec §6) as a LangGraph graph.

select (§3.3) → run (each probe locally, or as ``ecolevels.probe`` jobs fanned out with
:func:`core.jobs.dispatch.map_jobs`) → place (level by the
classifier, EV against the target) → reconcile (R1–R4, §3.4; predictions, §3.5) → report.
What to run comes from the run context (:class:`agents.ecolevels.config.EcoContext`), so the same graph runs from
the ``ecolevels.run`` job and through the API's Agent Protocol routes (``langgraph.json``), where a client sets
only ``context.config`` (a validated :class:`~agents.ecolevels.config.FlowConfig`).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agents.ecolevels.config import EcoContext, FlowConfig
from agents.ecolevels.state import FlowState, InputState
from core.checkpoint import checkpointer
from core.jobs.dispatch import map_jobs
from methods.ecolevels.experiment import run_probe
from methods.ecolevels.reconcile import predict, reconcile
from methods.ecolevels.registry import get_probe, load_probes
from methods.ecolevels.report import build_report, reading
from methods.ecolevels.result import ProbeResult
from methods.ecolevels.select import select_probes
from methods.ecolevels.validity import TARGETS, TargetTask

SELECT, RUN, PLACE, RECONCILE, REPORT = "select", "run", "place", "reconcile", "report"


def _ctx(runtime: Runtime[EcoContext] | None) -> EcoContext:
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    return ctx if isinstance(ctx, EcoContext) else EcoContext()


def _inputs(config: FlowConfig) -> dict[str, Any]:
    """The state keys every later node reads (and a checkpoint keeps), from the run's config."""
    from core.config import get_settings

    return {
        "target": TARGETS[config.target].model_dump(),
        "model": config.model or get_settings().llm_model,
        "settings": {
            "paraphrases": config.paraphrases,
            "seeds": list(config.seeds),
            "n_units": config.n_units,
            "mode": config.mode,
            "probes": list(config.probes),
        },
    }


def select(state: FlowState, runtime: Runtime[EcoContext]) -> dict[str, Any]:
    inputs = {k: state[k] for k in ("target", "model", "settings") if k in state}
    if len(inputs) < 3:
        inputs = _inputs(_ctx(runtime).config)
    target = TargetTask.model_validate(inputs["target"])
    wanted = inputs["settings"].get("probes")
    if wanted:
        from methods.ecolevels.classify import classify
        from methods.ecolevels.validity import ecological_validity

        chosen = []
        for pid in wanted:
            p = get_probe(pid)
            chosen.append(
                {
                    "probe_id": pid,
                    "role": "requested",
                    "level": classify(p.metadata),
                    "ev": ecological_validity(p.metadata, target),
                }
            )
        return {**inputs, "selection": chosen}
    return {**inputs, "selection": [s.model_dump() for s in select_probes(load_probes(), target)]}


def run(state: FlowState, runtime: Runtime[EcoContext]) -> dict[str, Any]:
    s, ctx = state["settings"], _ctx(runtime)
    kw = {"paraphrases": s.get("paraphrases", 2), "seeds": s.get("seeds", [0, 1]), "n_units": s.get("n_units", 8)}
    ids = [x["probe_id"] for x in state["selection"]]
    raw = map_jobs(
        "ecolevels.probe",
        [{"probe_id": pid, "model": state["model"], **kw} for pid in ids],
        inline=lambda p, _share: run_probe(p.probe_id, model=state["model"], **kw).model_dump(),
        result=lambda data: data["result"],
        dispatch="jobs" if s.get("mode", "inline") == "jobs" else "inline",
        key="ecolevels",
        timeout=ctx.timeout_s,
        steal_after=ctx.steal_after_s,
    )
    return {"raw": raw}


def place(state: FlowState) -> dict[str, Any]:
    target = TargetTask.model_validate(state["target"])
    return {
        "placed": [
            ProbeResult.model_validate(r).place(get_probe(r["probe_id"]), target).model_dump() for r in state["raw"]
        ]
    }


def reconcile_node(state: FlowState) -> dict[str, Any]:
    target = TargetTask.model_validate(state["target"])
    results = [ProbeResult.model_validate(r) for r in state["placed"]]
    return {
        "conflicts": [c.model_dump() for c in reconcile(results)],
        "predictions": [predict(r, target).model_dump() for r in results],
    }


def report(state: FlowState) -> dict[str, Any]:
    from methods.ecolevels.reconcile import Conflict, Prediction

    target = TargetTask.model_validate(state["target"])
    results = [ProbeResult.model_validate(r) for r in state["placed"]]
    conflicts = [Conflict.model_validate(c) for c in state["conflicts"]]
    rep = build_report(
        model=state["model"],
        target=target,
        results=results,
        conflicts=conflicts,
        predictions=[Prediction.model_validate(p) for p in state["predictions"]],
        selection=state["selection"],
        extra_sections={"Reading": reading(results, conflicts)},
    )
    return {"report": rep.model_dump()}


def build() -> StateGraph:
    g = StateGraph(FlowState, input_schema=InputState, context_schema=EcoContext)
    for name, fn in ((SELECT, select), (RUN, run), (PLACE, place), (RECONCILE, reconcile_node), (REPORT, report)):
        g.add_node(name, fn)
    g.add_edge(START, SELECT)
    g.add_edge(SELECT, RUN)
    g.add_edge(RUN, PLACE)
    g.add_edge(PLACE, RECONCILE)
    g.add_edge(RECONCILE, REPORT)
    g.add_edge(REPORT, END)
    return g


graph = build().compile(name="ecolevels")
"""The uncheckpointed flow (``langgraph.json`` points here); jobs use :func:`run_flow`."""


def run_flow(config: FlowConfig, *, thread_id: str | None = None, steal_after_s: float = 20.0) -> FlowState:
    """Run the flow; with ``thread_id`` it is checkpointed (``core.checkpoint``) and resumes after a crash."""
    ctx = EcoContext(config=config, steal_after_s=steal_after_s)
    if thread_id is None:
        return graph.invoke({}, context=ctx)
    with checkpointer("ecolevels") as saver:
        compiled = build().compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": f"ecolevels:{thread_id}"}}
        snap = compiled.get_state(cfg)
        return compiled.invoke(None if snap.next else {}, cfg, context=ctx)
