"""What the PAE store hands to training does not depend on its random row ids."""

from __future__ import annotations

import random

from agents.pae import store
from agents.pae.rollout import StepRecord, Trajectory
from agents.pae.sites import build_sites


def _step(i: int, reply: str) -> StepRecord:
    return StepRecord(
        idx=i,
        url="http://shop.local/",
        page_text="",
        elements="",
        screenshot=None,
        prompt=[{"role": "user", "content": f"state {i}"}],
        reply=reply,
        thought="",
        action=reply,
        format_error=False,
        message="",
    )


def test_step_examples_follow_the_given_trajectory_order_not_the_ids():
    tasks = build_sites(0)["shop"].template_tasks(random.Random(5), 6)
    run_id = store.create_run(name="order", config={})
    rows = store.add_tasks(run_id=run_id, tasks=tasks, split="train")
    ids = []
    for slot, task in enumerate(tasks):
        traj = Trajectory(task=task, policy="test", answer="x", steps=[_step(j, f"t{slot}s{j}") for j in range(2)])
        ids.append(
            store.save_trajectory(
                run_id=run_id, iteration=0, phase="rollout", slot=slot, task_row_id=rows[task.id], traj=traj
            )
        )
    for order in (ids, ids[::-1], [ids[3], ids[0], ids[5], ids[1], ids[4], ids[2]]):
        replies = [reply for _, reply, _ in store.step_examples(trajectory_ids=order)]
        slots = [ids.index(t) for t in order]
        assert replies == [f"t{s}s{j}" for s in slots for j in range(2)]
