"""Behaviour statistics of a policy's stored trajectories: what the model can and cannot do, measured.

Used by the reproducer to write its capability statement from numbers rather than
impressions: format-error rate, how often it answers, whether its ``Type`` actions
copy the right words from the task, how often it repeats itself, and how long its
episodes are.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from agents.pae.models import PaeStep, PaeTask, PaeTrajectory
from core.db.session import session_scope


def behaviour(run_ids: list[str], phases: tuple[str, ...] = ("rollout", "test")) -> dict[str, Any]:
    """Aggregate statistics over the model-policy trajectories of ``run_ids`` in ``phases``."""
    with session_scope() as s:
        trajs = s.execute(
            select(PaeTrajectory, PaeTask)
            .join(PaeTask, PaeTask.id == PaeTrajectory.task_id)
            .where(PaeTrajectory.run_id.in_(run_ids), PaeTrajectory.phase.in_(phases))
        ).all()
        ids = [t.id for t, _ in trajs]
        steps = (
            s.scalars(
                select(PaeStep).where(PaeStep.trajectory_id.in_(ids)).order_by(PaeStep.trajectory_id, PaeStep.idx)
            ).all()
            if ids
            else []
        )
        by_traj: dict[str, list[PaeStep]] = {}
        for st in steps:
            by_traj.setdefault(st.trajectory_id, []).append(st)
        n_steps = len(steps)
        fmt = sum(st.format_error for st in steps)
        types = [
            (st, task.question) for t, task in trajs for st in by_traj.get(t.id, []) if st.action.startswith("Type [")
        ]
        copied = sum(_typed_text(st.action).lower() in q.lower() for st, q in types if _typed_text(st.action))
        loops = sum(_repeats(by_traj.get(t.id, [])) for t, _ in trajs)
        answered = sum(t.answer is not None for t, _ in trajs)
        correct = sum((t.oracle_reward or 0) > 0 for t, _ in trajs)
        answered_wrong = sum(t.answer is not None and (t.oracle_reward or 0) == 0 for t, _ in trajs)
        na = sum((t.answer or "").strip().upper() in ("N/A", "NA") for t, _ in trajs)
    n = max(1, len(trajs))
    return {
        "trajectories": len(trajs),
        "steps": n_steps,
        "format_error_rate": fmt / max(1, n_steps),
        "answered_rate": answered / n,
        "success_rate": correct / n,
        "wrong_answer_rate": answered_wrong / n,
        "na_answer_rate": na / n,
        "type_actions": len(types),
        "type_copies_task_text": copied / max(1, len(types)),
        "loop_rate": loops / n,
        "mean_steps": n_steps / n,
    }


def _typed_text(action: str) -> str:
    return action.split(";", 1)[1].strip().strip("[]").strip() if ";" in action else ""


def _repeats(steps: list[PaeStep], k: int = 3) -> bool:
    """The same action issued ``k`` times in a row (the agent is stuck)."""
    run = 1
    for a, b in zip(steps, steps[1:]):
        run = run + 1 if (a.action and a.action == b.action) else 1
        if run >= k:
            return True
    return False


def capability_text(stats: dict[str, Any], sft_stats: dict[str, Any]) -> str:
    """A plain statement of what the model did, from the measured rates."""

    def pct(x: float) -> str:
        return f"{100 * x:.0f}%"

    can, cannot = [], []
    (can if stats["format_error_rate"] < 0.2 else cannot).append(
        f"keep to the Thought/Action format (format errors in {pct(stats['format_error_rate'])} of "
        f"{stats['steps']} steps)"
    )
    (can if stats["type_copies_task_text"] >= 0.5 else cannot).append(
        f"type the words the task names into a search box ({pct(stats['type_copies_task_text'])} of "
        f"{stats['type_actions']} Type actions copy text from the task)"
    )
    (can if stats["answered_rate"] >= 0.5 else cannot).append(
        f"decide to stop and ANSWER ({pct(stats['answered_rate'])} of {stats['trajectories']} episodes answer; "
        f"{pct(stats['loop_rate'])} repeat one action 3+ times in a row)"
    )
    (can if stats["success_rate"] >= 0.3 else cannot).append(
        f"read the right value off the page ({pct(stats['success_rate'])} of episodes are correct, "
        f"{pct(stats['wrong_answer_rate'])} answer wrongly)"
    )
    lines = [
        "Measured over every model-policy rollout and test episode of the three runs (SFT start "
        f"included): mean {stats['mean_steps']:.1f} steps per episode."
    ]
    if can:
        lines.append("**Can:** " + "; ".join(can) + ".")
    if cannot:
        lines.append("**Cannot (reliably):** " + "; ".join(cannot) + ".")
    if sft_stats:
        lines.append(
            f"The scripted demonstrator that seeds the SFT start solves {pct(sft_stats['success_rate'])} "
            f"of its {sft_stats['trajectories']} demonstrations in {sft_stats['mean_steps']:.1f} steps on "
            "average; the gap to it is what PAE's self-practice has to close."
        )
    return "\n\n".join(lines)
