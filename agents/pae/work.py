"""The units of work the orchestrator fans out: a batch of rollouts, a batch of evaluations.

Both take ids and re-read rows (safe to run in another process, and to run twice:
stored slots and verdicts are skipped or replaced, never duplicated). They run
inline in the orchestrator or as the ``pae.rollouts`` / ``pae.evaluate`` jobs.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from agents.pae import store
from agents.pae.env import EnvConfig
from agents.pae.evaluator import LLMJudge, OracleEvaluator, State
from agents.pae.policy import LLMPolicy, PolicyConfig
from agents.pae.rollout import run_batch
from agents.pae.runtime import policy_model, sites_url
from agents.pae.scripted import ScriptedPolicy
from agents.pae.sites.base import SiteTask
from core.jobs import JobContext, null_context

log = logging.getLogger(__name__)


def do_rollouts(
    *,
    run_id: str,
    iteration: int,
    phase: str,
    assignments: list[tuple[int, str]],
    policy: dict[str, Any],
    temperature: float,
    max_tokens: int = 48,
    max_steps: int = 10,
    wait_s: float = 5.0,
    parallel: int = 1,
    seed: int = 0,
    content_seed: int = 0,
    keep_screenshots: bool = True,
    progress: JobContext | None = None,
) -> list[str]:
    """Play ``(slot, task row id)`` assignments not yet stored; returns the trajectory ids of all of them.

    ``policy`` is a runtime policy reference, or ``{"kind": "scripted"}`` for the oracle demonstrator.
    """
    progress = progress or null_context()
    done = store.stored_slots(run_id=run_id, iteration=iteration, phase=phase)
    todo = [(slot, tid) for slot, tid in assignments if slot not in done]
    tasks = {tid: store.get_task(task_row_id=tid) for _, tid in todo}
    scripted = policy.get("kind") == "scripted"
    model = None if scripted else policy_model(policy)
    base_url = sites_url(content_seed)
    shot_root = Path(tempfile.mkdtemp(prefix="pae-shots-")) if keep_screenshots else None
    finished = [0]

    def factory(task: SiteTask):
        if scripted:
            return ScriptedPolicy(task)
        return LLMPolicy(PolicyConfig(model=model, temperature=temperature, max_tokens=max_tokens, seed=seed))

    def on_done(slot: int, traj) -> None:
        store.save_trajectory(
            run_id=run_id, iteration=iteration, phase=phase, slot=slot, task_row_id=slot_task[slot], traj=traj
        )
        finished[0] += 1
        progress(finished[0] / max(1, len(todo)), f"{phase} {finished[0]}/{len(todo)}")

    slot_task = dict(todo)
    env_cfg = EnvConfig(max_steps=max_steps, wait_s=wait_s)
    try:
        if todo:
            # each episode samples with its own seed stream so rollouts of one task differ
            run_batch(
                base_url,
                [(slot, tasks[tid]) for slot, tid in todo],
                _seeded(factory, seed, iteration, phase, scripted),
                parallel=parallel,
                env_config=env_cfg,
                shot_dir=shot_root,
                on_done=on_done,
            )
    finally:
        if shot_root is not None:
            shutil.rmtree(shot_root, ignore_errors=True)
    rows = {r["slot"]: r["id"] for r in store.trajectory_rows(run_id=run_id, phase=phase, iteration=iteration)}
    return [rows[slot] for slot, _ in assignments if slot in rows]


def _seeded(factory, seed: int, iteration: int, phase: str, scripted: bool):
    """Wrap the policy factory so each task's policy gets a distinct sampling seed."""
    counter = [0]

    def make(task: SiteTask):
        pol = factory(task)
        if not scripted:
            counter[0] += 1
            pol.config.seed = (
                seed * 1_000_003 + iteration * 10_007 + counter[0] * 101 + (0 if phase == "rollout" else 7)
            ) % (2**31)
        return pol

    return make


def do_evaluate(
    *,
    trajectory_ids: list[str],
    judge: bool,
    judge_model: str | None = None,
    judge_max_tokens: int = 256,
    judge_retries: int = 2,
    progress: JobContext | None = None,
) -> dict[str, int]:
    """Oracle verdicts (tasks with a reference) and, if asked, LLM-judge verdicts for each trajectory."""
    progress = progress or null_context()
    oracle = OracleEvaluator()
    llm = LLMJudge(judge_model, max_tokens=judge_max_tokens, retries=judge_retries) if judge else None
    counts = {"oracle": 0, "judge": 0, "judge_calls": 0, "judge_unparsable": 0}
    for i, tid in enumerate(trajectory_ids):
        d = store.trajectory_detail(trajectory_id=tid)
        if d is None:
            continue
        ref, answer = d["task"]["reference"], d["answer"]
        v = oracle.evaluate(ref, answer)
        if v is not None:
            store.save_verdict(trajectory_id=tid, verdict=v)
            counts["oracle"] += 1
        if llm is not None and not any(x["evaluator"] == llm.name for x in d["verdicts"]):
            states = _states(d)
            jv = llm.evaluate(d["task"]["question"], answer, states)
            store.save_verdict(trajectory_id=tid, verdict=jv)
            counts["judge"] += 1
            counts["judge_calls"] += int(jv.called)
        progress((i + 1) / len(trajectory_ids), f"evaluated {i + 1}/{len(trajectory_ids)}")
    if llm is not None:
        counts["judge_unparsable"] = llm.unparsable
    return counts


def _states(detail: dict[str, Any]) -> list[State]:
    """The last 3 states of a stored trajectory (page text from the steps; screenshots from the store)."""
    from sqlalchemy import select

    from agents.pae.models import PaeStep
    from core.artifacts import get_artifact_store
    from core.db.session import session_scope

    with session_scope() as s:
        steps = s.scalars(select(PaeStep).where(PaeStep.trajectory_id == detail["id"]).order_by(PaeStep.idx)).all()
        texts = {st.idx: (st.url, st.page_text, st.elements) for st in steps}
    art = get_artifact_store()
    states = []
    for st in detail["steps"]:
        url, text, elements = texts[st["idx"]]
        sha = st["screenshots"].get("before")
        states.append(State(url, text, elements, str(art.path_for(sha)) if sha else None))
    if detail["answer"] is None and detail["steps"]:  # timed out: the page after the last action is a state too
        sha = detail["steps"][-1]["screenshots"].get("final")
        states.append(State(detail["final_url"], detail["final_text"], "", str(art.path_for(sha)) if sha else None))
    return states[-3:]
