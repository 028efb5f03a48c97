"""Reading and writing PAE runs, tasks, trajectories, steps, screenshots and verdicts (keyword-only).

Writes are idempotent per (run, iteration, phase, slot): a re-delivered rollout job
or a resumed graph finds the trajectory already stored and keeps it. Screenshots go
to the artifact store (content-addressed); the rows keep their digests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from agents.pae.evaluator import Verdict
from agents.pae.models import PaeRun, PaeScreenshot, PaeStep, PaeTask, PaeTrajectory, PaeVerdict
from agents.pae.rollout import Trajectory
from agents.pae.sites.base import SiteTask
from core.artifacts import get_artifact_store
from core.db.session import session_scope


def create_run(*, name: str, config: dict[str, Any], run_id: str | None = None) -> str:
    with session_scope() as s:
        if run_id and s.get(PaeRun, run_id) is not None:
            return run_id
        row = PaeRun(name=name, config=config, **({"id": run_id} if run_id else {}))
        s.add(row)
        s.flush()
        return row.id


def get_run(*, run_id: str) -> dict[str, Any] | None:
    with session_scope() as s:
        r = s.get(PaeRun, run_id)
        if r is None:
            return None
        return {
            "id": r.id,
            "name": r.name,
            "status": r.status,
            "config": dict(r.config),
            "iteration": r.iteration,
            "policy": r.policy,
            "metrics": dict(r.metrics or {}),
            "created_at": r.created_at.isoformat(),
        }


def list_runs(*, limit: int = 50) -> list[dict[str, Any]]:
    with session_scope() as s:
        rows = s.scalars(select(PaeRun).order_by(PaeRun.created_at.desc()).limit(limit)).all()
        return [
            {
                "id": r.id,
                "name": r.name,
                "status": r.status,
                "iteration": r.iteration,
                "created_at": r.created_at.isoformat(),
            }
            for r in rows
        ]


def update_run(*, run_id: str, **fields: Any) -> None:
    with session_scope() as s:
        r = s.get(PaeRun, run_id)
        for k, v in fields.items():
            if k == "metrics":
                v = {**(r.metrics or {}), **v}
            setattr(r, k, v)


def add_tasks(*, run_id: str, tasks: list[SiteTask], split: str) -> dict[str, str]:
    """Insert tasks not yet in the run's split; returns task_key → row id for all of them."""
    with session_scope() as s:
        existing = {
            t.task_key: t.id for t in s.scalars(select(PaeTask).where(PaeTask.run_id == run_id, PaeTask.split == split))
        }
        for t in tasks:
            if t.id in existing:
                continue
            row = PaeTask(
                run_id=run_id,
                task_key=t.id,
                site=t.site,
                split=split,
                question=t.question,
                start_path=t.start_path,
                reference=t.reference,
                plan=[list(p) for p in t.plan],
                template=t.template,
                proposer=t.proposer,
            )
            s.add(row)
            s.flush()
            existing[t.id] = row.id
        return {t.id: existing[t.id] for t in tasks}


def _to_task(row: PaeTask) -> SiteTask:
    return SiteTask(
        id=row.task_key,
        site=row.site,
        question=row.question,
        start_path=row.start_path,
        reference=dict(row.reference or {}),
        plan=[tuple(p) for p in row.plan or []],
        template=row.template,
        proposer=row.proposer,
    )


def load_tasks(*, run_id: str, split: str | None = None) -> list[tuple[str, SiteTask, str]]:
    """(row id, task, split) of a run, in insertion order of keys."""
    with session_scope() as s:
        q = select(PaeTask).where(PaeTask.run_id == run_id)
        if split is not None:
            q = q.where(PaeTask.split == split)
        return [(r.id, _to_task(r), r.split) for r in s.scalars(q.order_by(PaeTask.task_key))]


def get_task(*, task_row_id: str) -> SiteTask:
    with session_scope() as s:
        return _to_task(s.get(PaeTask, task_row_id))


def stored_slots(*, run_id: str, iteration: int, phase: str) -> set[int]:
    with session_scope() as s:
        return set(
            s.scalars(
                select(PaeTrajectory.slot).where(
                    PaeTrajectory.run_id == run_id, PaeTrajectory.iteration == iteration, PaeTrajectory.phase == phase
                )
            )
        )


def save_trajectory(*, run_id: str, iteration: int, phase: str, slot: int, task_row_id: str, traj: Trajectory) -> str:
    """Store a trajectory with its steps and screenshots; an already stored slot is kept as is."""
    store = get_artifact_store()
    shots: dict[int, str] = {}
    for st in traj.steps:
        if st.screenshot and Path(st.screenshot).exists():
            shots[st.idx] = store.put_file(Path(st.screenshot), mime="image/png").sha256
    final_sha = None
    if traj.final is not None and traj.final.screenshot and Path(traj.final.screenshot).exists():
        final_sha = store.put_file(Path(traj.final.screenshot), mime="image/png").sha256
    try:
        with session_scope() as s:
            row = PaeTrajectory(
                run_id=run_id,
                task_id=task_row_id,
                iteration=iteration,
                phase=phase,
                slot=slot,
                policy=traj.policy,
                answer=traj.answer,
                n_steps=traj.length,
                format_errors=traj.format_errors,
                timed_out=traj.timed_out,
                seconds=traj.seconds,
                final_url=traj.final.url if traj.final else "",
                final_text=traj.final.page_text if traj.final else "",
            )
            s.add(row)
            s.flush()
            last_step = None
            for st in traj.steps:
                step = PaeStep(
                    trajectory_id=row.id,
                    idx=st.idx,
                    url=st.url,
                    reply=st.reply,
                    thought=st.thought,
                    action=st.action,
                    format_error=st.format_error,
                    message=st.message,
                    page_text=st.page_text,
                    elements=st.elements,
                    prompt=st.prompt,
                )
                s.add(step)
                s.flush()
                last_step = step
                if st.idx in shots:
                    s.add(PaeScreenshot(step_id=step.id, kind="before", sha256=shots[st.idx]))
            if final_sha and last_step is not None:
                s.add(PaeScreenshot(step_id=last_step.id, kind="final", sha256=final_sha))
            return row.id
    except IntegrityError:  # the slot was stored by an earlier delivery
        with session_scope() as s:
            return s.scalar(
                select(PaeTrajectory.id).where(
                    PaeTrajectory.run_id == run_id,
                    PaeTrajectory.iteration == iteration,
                    PaeTrajectory.phase == phase,
                    PaeTrajectory.slot == slot,
                )
            )


def save_verdict(*, trajectory_id: str, verdict: Verdict) -> None:
    """Record (or replace) one evaluator's verdict and mirror it onto the trajectory's reward columns."""
    with session_scope() as s:
        s.execute(
            delete(PaeVerdict).where(
                PaeVerdict.trajectory_id == trajectory_id, PaeVerdict.evaluator == verdict.evaluator
            )
        )
        s.add(
            PaeVerdict(
                trajectory_id=trajectory_id,
                evaluator=verdict.evaluator,
                reward=verdict.reward,
                text=verdict.text[:4000],
                called_model=verdict.called,
            )
        )
        t = s.get(PaeTrajectory, trajectory_id)
        if verdict.evaluator == "oracle":
            t.oracle_reward = verdict.reward
        elif verdict.evaluator.startswith("llm:"):
            t.judge_reward = verdict.reward


def set_reward(*, trajectory_id: str, reward: float) -> None:
    with session_scope() as s:
        s.get(PaeTrajectory, trajectory_id).reward = reward


def trajectory_rows(
    *, run_id: str, phase: str | None = None, iteration: int | None = None, max_iteration: int | None = None
) -> list[dict[str, Any]]:
    """Trajectories (without steps) joined with their task's key, site, split and question."""
    with session_scope() as s:
        q = (
            select(PaeTrajectory, PaeTask)
            .join(PaeTask, PaeTask.id == PaeTrajectory.task_id)
            .where(PaeTrajectory.run_id == run_id)
        )
        if phase is not None:
            q = q.where(PaeTrajectory.phase == phase)
        if iteration is not None:
            q = q.where(PaeTrajectory.iteration == iteration)
        if max_iteration is not None:
            q = q.where(PaeTrajectory.iteration <= max_iteration)
        out = []
        for t, task in s.execute(q.order_by(PaeTrajectory.iteration, PaeTrajectory.phase, PaeTrajectory.slot)):
            out.append(
                {
                    "id": t.id,
                    "task_row_id": task.id,
                    "task_id": task.task_key,
                    "site": task.site,
                    "split": task.split,
                    "question": task.question,
                    "proposer": task.proposer,
                    "iteration": t.iteration,
                    "phase": t.phase,
                    "slot": t.slot,
                    "policy": t.policy,
                    "answer": t.answer,
                    "length": t.n_steps,
                    "format_errors": t.format_errors,
                    "timed_out": t.timed_out,
                    "reward": t.reward,
                    "oracle_reward": t.oracle_reward,
                    "judge_reward": t.judge_reward,
                    "seconds": t.seconds,
                }
            )
        return out


def trajectory_detail(*, trajectory_id: str) -> dict[str, Any] | None:
    """One trajectory with its steps (thought, action, screenshots) and verdicts."""
    with session_scope() as s:
        t = s.get(PaeTrajectory, trajectory_id)
        if t is None:
            return None
        task = s.get(PaeTask, t.task_id)
        steps = s.scalars(select(PaeStep).where(PaeStep.trajectory_id == t.id).order_by(PaeStep.idx)).all()
        shots: dict[str, list[tuple[str, str]]] = {}
        for sh in s.scalars(select(PaeScreenshot).where(PaeScreenshot.step_id.in_([st.id for st in steps]))):
            shots.setdefault(sh.step_id, []).append((sh.kind, sh.sha256))
        verdicts = s.scalars(select(PaeVerdict).where(PaeVerdict.trajectory_id == t.id)).all()
        return {
            "id": t.id,
            "run_id": t.run_id,
            "iteration": t.iteration,
            "phase": t.phase,
            "slot": t.slot,
            "policy": t.policy,
            "answer": t.answer,
            "n_steps": t.n_steps,
            "timed_out": t.timed_out,
            "reward": t.reward,
            "oracle_reward": t.oracle_reward,
            "judge_reward": t.judge_reward,
            "final_url": t.final_url,
            "final_text": t.final_text,
            "task": {
                "key": task.task_key,
                "site": task.site,
                "split": task.split,
                "question": task.question,
                "reference": task.reference,
                "proposer": task.proposer,
            },
            "steps": [
                {
                    "idx": st.idx,
                    "url": st.url,
                    "thought": st.thought,
                    "action": st.action,
                    "reply": st.reply,
                    "format_error": st.format_error,
                    "message": st.message,
                    "screenshots": {k: sha for k, sha in shots.get(st.id, [])},
                }
                for st in steps
            ],
            "verdicts": [{"evaluator": v.evaluator, "reward": v.reward, "text": v.text} for v in verdicts],
        }


def step_examples(*, trajectory_ids: list[str]) -> list[tuple[list[dict[str, str]], str, str]]:
    """(prompt messages, reply, trajectory id) of every step of the given trajectories, in the order the
    trajectories are given, each trajectory's steps in order.

    Not in id order: ids are random, so that order would differ between two runs of the same seed and
    make training (whose shuffle is seeded) see its examples in another order every run.
    """
    position = {tid: i for i, tid in enumerate(dict.fromkeys(trajectory_ids))}
    with session_scope() as s:
        rows = s.scalars(select(PaeStep).where(PaeStep.trajectory_id.in_(trajectory_ids))).all()
        rows = sorted(rows, key=lambda r: (position[r.trajectory_id], r.idx))
        return [(list(r.prompt), r.reply, r.trajectory_id) for r in rows]


def screenshot_known(*, sha256: str) -> bool:
    with session_scope() as s:
        return s.scalar(select(PaeScreenshot.id).where(PaeScreenshot.sha256 == sha256).limit(1)) is not None
