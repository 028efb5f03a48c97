"""Arms over cases: run (inline or fanned out), store, score; the reproducer's set of arms.

An :class:`Arm` is a graph mode (``cgot`` / ``direct``) with a config (model, oracle nodes…). Running
it stores every case (with its QA items) and node answer in the benchmark's tables under a run id,
then computes the six task metrics from what was stored — so the inline path and the worker fan-out
(``clinical_got.case`` jobs through :func:`core.jobs.dispatch.enqueue` / :func:`~core.jobs.dispatch.wait`)
score exactly the same rows.

:func:`run_case` runs (or resumes) the graph on one case, checkpointed: the thread id is a hash of the
case, the graph mode and the configuration, so re-running after a crash resumes from the last finished
node, and re-running a finished case returns the stored state without new LLM calls.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from agents.clinical_got.config import ClinicalGotConfig, ClinicalGotContext
from agents.clinical_got.graph import NODES, Mode, build_graph
from core.jobs import JobContext, Report, null_context
from core.llm import model_available
from methods.clinical_got.bench import PreparedCase
from methods.clinical_got.evaluate import bayes_accuracy, majority_outcome_accuracy, task_metrics

log = logging.getLogger(__name__)
CHECKPOINTS = "clinical_got"


def thread_id(case_id: str, mode: Mode, config: ClinicalGotConfig, salt: str = "") -> str:
    blob = json.dumps([case_id, mode, config.model_dump(mode="json"), salt], sort_keys=True)
    return f"clinical_got:{mode}:{case_id}:{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


def run_case(
    case_id: str,
    config: ClinicalGotConfig | None = None,
    *,
    mode: Mode = "cgot",
    checkpoint: bool = True,
    salt: str = "",
    on_event=None,
) -> dict[str, Any]:
    """The graph's final state for ``case_id`` (``{"case_id", "n1", …, "n5"}``)."""
    config = config or ClinicalGotConfig()
    ctx = ClinicalGotContext(config=config, on_event=on_event)
    inputs = {"case_id": case_id}
    if not checkpoint:
        return dict(build_graph(mode).invoke(inputs, context=ctx))
    from core.checkpoint import checkpointer

    tid = thread_id(case_id, mode, config, salt)
    with checkpointer(CHECKPOINTS) as saver:
        g = build_graph(mode, checkpointer=saver)
        cfg = {"configurable": {"thread_id": tid}}
        snap = g.get_state(cfg)
        if snap.values and not snap.next and all(n in snap.values for n in NODES):
            return dict(snap.values)  # finished before: no new calls
        resume = bool(snap.values) and bool(snap.next)
        if resume:
            log.info("resuming %s at %s", tid, list(snap.next))
        return dict(g.invoke(None if resume else inputs, cfg, context=ctx))


def scored_row(state: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    """A row for :func:`methods.clinical_got.evaluate.task_metrics`."""
    parsed = {n: (state.get(n) or {}).get("parsed") for n in ("n1", "n2", "n2_5", "n3", "n4")}
    return {
        "case_id": state["case_id"],
        "truth": truth,
        "parsed": parsed,
        "caption": (state.get("n5") or {}).get("answer", ""),
        "answers": {n: state.get(n) or {} for n in NODES},
    }


@dataclass
class Arm:
    name: str
    mode: Mode
    config: ClinicalGotConfig
    label: str = ""


@dataclass
class ArmResult:
    arm: Arm
    run_id: str
    rows: list[dict[str, Any]]
    metrics: dict[str, Any]
    seconds: float
    baselines: dict[str, float] = field(default_factory=dict)

    @property
    def model(self) -> str:
        from agents.clinical_got.nodes import model_of

        return model_of(self.arm.config)


def run_one(
    case_id: str, config: ClinicalGotConfig, mode: Mode, *, run_id: str | None = None, arm: str = "single"
) -> tuple[dict[str, Any], PreparedCase]:
    """One case through the graph (checkpointed); stores case, QA items and answers when ``run_id`` is given."""
    from agents.clinical_got.nodes import case_of, model_of

    case = case_of(config, case_id)
    state = run_case(case_id, config, mode=mode)
    row = scored_row(state, case.truth)
    if run_id:
        from methods.clinical_got.store import save_answers, save_case

        pk = save_case(config.bench.key(), case)
        save_answers(run_id, arm, pk, model_of(config), row["answers"])
    return row, case


def run_id_for(arm: Arm, case_ids: list[str]) -> str:
    blob = json.dumps([arm.name, arm.mode, arm.config.model_dump(mode="json"), case_ids], sort_keys=True)
    return "cgot-" + hashlib.sha256(blob.encode()).hexdigest()[:20]


def _rows_from_store(run_id: str, arm: str, case_ids: list[str], config: ClinicalGotConfig) -> list[dict[str, Any]]:
    from sqlalchemy import select

    from core.db.session import session_scope
    from methods.clinical_got.models import ClinicalCase, ClinicalNodeAnswer

    with session_scope() as s:
        q = (
            select(ClinicalCase.case_id, ClinicalCase.truth, ClinicalNodeAnswer)
            .join(ClinicalNodeAnswer, ClinicalNodeAnswer.case_pk == ClinicalCase.id)
            .where(ClinicalNodeAnswer.run_id == run_id, ClinicalNodeAnswer.arm == arm)
            .where(ClinicalCase.bench_key == config.bench.key())
        )
        by_case: dict[str, dict[str, Any]] = {}
        for case_id, truth, a in s.execute(q):
            entry = by_case.setdefault(case_id, {"truth": truth, "state": {"case_id": case_id}})
            entry["state"][a.node] = {
                "node": a.node,
                "source": a.source,
                "prompt": a.prompt,
                "answer": a.answer,
                "parsed": a.parsed,
                "seconds": a.seconds,
            }
    missing = [c for c in case_ids if c not in by_case]
    if missing:
        raise RuntimeError(f"run {run_id} ({arm}) has no stored answers for {missing}")
    return [scored_row(by_case[c]["state"], by_case[c]["truth"]) for c in case_ids]


def run_arm(arm: Arm, case_ids: list[str], progress: JobContext | None = None, *, fan_out: str = "inline") -> ArmResult:
    """Every case of ``case_ids`` through ``arm``; metrics stored under the arm's run id."""
    from methods.clinical_got.store import save_metrics

    progress = progress or null_context()
    run_id = run_id_for(arm, case_ids)
    t0 = time.perf_counter()
    if fan_out == "jobs":
        from core.jobs.dispatch import enqueue, wait

        ids = []
        for c in case_ids:
            params = {
                "case_id": c,
                "mode": arm.mode,
                "model": arm.config.model,
                "n_cases": arm.config.bench.n_cases,
                "seed": arm.config.bench.seed,
                "visual": arm.config.visual,
                "score_knowledge": arm.config.score_knowledge,
                "oracle_nodes": list(arm.config.oracle_nodes),
                "run_id": run_id,
                "arm": arm.name,
            }
            ids.append(enqueue("clinical_got.case", params, idempotency_key=f"{run_id}:{arm.name}:{c}"))
        wait(ids, timeout=6 * 3600, steal_after=60, progress=progress)
    else:
        for i, c in enumerate(case_ids):
            progress(i / max(1, len(case_ids)), f"{arm.name}: {c}")
            run_one(c, arm.config, arm.mode, run_id=run_id, arm=arm.name)
    rows = _rows_from_store(run_id, arm.name, case_ids, arm.config)
    metrics = task_metrics(rows)
    result = ArmResult(arm, run_id, rows, metrics, time.perf_counter() - t0)
    result.baselines = {"majority_outcome_accuracy": majority_outcome_accuracy(rows), "bayes": bayes_accuracy(rows)}
    save_metrics(run_id, arm.name, result.model, metrics)
    progress(1.0, f"{arm.name}: outcome accuracy {metrics['task4']['accuracy']:.3f}")
    return result


def trace_report(row: dict[str, Any], case: PreparedCase, mode: Mode, config: ClinicalGotConfig) -> Report:
    """A one-case report: the per-node trace, the slice triples and the ground truth."""
    from agents.clinical_got.report import case_trace_report

    return case_trace_report(row, case, mode, config)


def reproduce_arms(options: Any, progress: JobContext) -> tuple[list[ArmResult], dict[str, str]]:
    """Per model: direct, CGoT and CGoT with oracle N1–N3 (upper bound); once: the all-oracle ceiling."""
    from methods.clinical_got.config import BenchConfig

    skipped: dict[str, str] = {}
    plan: list[tuple[Arm, list[str]]] = []
    n_all = max(options.n_cases, options.n_cases_large)
    # case i is the same in any benchmark of this seed (it is drawn from (seed, i) alone), so the benchmark is
    # named at its full size whatever the run's count: a larger run reuses a smaller one's checkpoints
    bench = BenchConfig(n_cases=max(BenchConfig().n_cases, n_all), seed=options.seed)
    for i, model in enumerate(options.models):
        n = options.n_cases if i == 0 else options.n_cases_large
        why = model_available(model)
        if why:
            skipped[model] = f"not installed here ({why[:200]})"
            continue
        if n == 0:
            skipped[model] = "n_cases_large = 0 in this preset"
            continue
        cases = bench.case_ids()[:n]
        base = ClinicalGotConfig(model=model, bench=bench)
        short = model.split("/")[-1]
        plan.append((Arm("direct", "direct", base, f"{short}: direct"), cases))
        plan.append((Arm("cgot", "cgot", base, f"{short}: CGoT"), cases))
        oracle = base.model_copy(update={"oracle_nodes": ["n1", "n2", "n3"]})
        plan.append((Arm("cgot-oracle-upstream", "cgot", oracle, f"{short}: CGoT, oracle N1–N3"), cases))
    ceiling = ClinicalGotConfig(model="oracle", bench=bench, oracle_nodes=["n1", "n2", "n3", "n4"])
    plan.append((Arm("oracle-all", "cgot", ceiling, "oracle N1–N4 (Bayes ceiling)"), bench.case_ids()[:n_all]))
    results = []
    for j, (arm, cases) in enumerate(plan):
        span = progress.sub(j / len(plan), (j + 1) / len(plan))
        results.append(run_arm(arm, cases, span, fan_out=options.fan_out))
    return results, skipped
