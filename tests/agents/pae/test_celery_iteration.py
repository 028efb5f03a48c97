"""A full tiny PAE iteration through Celery: rollout and evaluation batches run on a real worker process.

Real local model (SmolLM2-135M) as policy and as judge; 2 tasks, 2 rollouts, 2-step cap.
The orchestrator (this process) only submits jobs and polls their rows.
"""

from __future__ import annotations

import pytest

from agents.pae import store
from agents.pae.config import RunConfig
from agents.pae.dispatch import JobDispatcher
from agents.pae.loop import run_pae

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_tiny_iteration_through_celery(settings, tmp_path, chromium_path):
    from core.db import crud
    from core.db.session import session_scope
    from core.devstack import Stack
    from core.jobs.lifecycle import worker_name
    from services.worker.tasks.jobs import enqueue

    stack = Stack(
        tmp_path / "worker-home",
        str(settings.database_url),
        str(settings.broker_url),
        PAPERWORKS_ARTIFACT_DIR=str(settings.artifact_dir),
        PAPERWORKS_CACHE_DIR=str(settings.cache_dir),
    )
    try:
        stack.start_worker("paeworker")
        cfg = RunConfig(
            name="celery-tiny",
            train_sites=["dictionary"],
            heldout_sites=[],
            tasks_per_site=2,
            test_tasks_per_site=0,
            iterations=1,
            rollouts_per_iteration=2,
            dispatch="celery",
            rollout_batch=1,
            max_steps=2,
            policy_max_tokens=24,
            reward="llm",
            judge_max_tokens=8,
            judge_tests=False,
            seed=3,
        )
        disp = JobDispatcher(batch_size=1, enqueue=enqueue, poll_s=0.3, steal_after_s=600)
        res = run_pae(cfg, dispatcher=disp)
    finally:
        stack.close()
    kinds = [h["kind"] for h in res.history]
    assert kinds == ["propose", "sft", "test", "collected", "rollout", "filter", "train", "test"]
    assert disp.stolen == 0 and len(disp.job_ids) == 4  # 2 rollout batches + 2 evaluation batches
    with session_scope() as s:
        jobs = [crud.get_job(s, job_id=j) for j in disp.job_ids]
        assert all(j.status == "succeeded" and j.worker and j.worker != worker_name() for j in jobs)
        assert {j.method for j in jobs} == {"pae.rollouts", "pae.evaluate"}
    rows = store.trajectory_rows(run_id=res.run_id, phase="rollout")
    assert len(rows) == 2 and all(r["policy"] == "local/smollm2-135m-instruct" for r in rows)
    for r in rows:
        d = store.trajectory_detail(trajectory_id=r["id"])
        assert 1 <= d["n_steps"] <= 2 and all(st["screenshots"].get("before") for st in d["steps"])
        evaluators = {v["evaluator"] for v in d["verdicts"]}
        assert "oracle" in evaluators and "llm:local/smollm2-135m-instruct" in evaluators
        assert r["reward"] == r["judge_reward"]  # the LLM judge's verdict is the training reward
        if r["answer"] is None:
            assert r["reward"] == 0.0
    flt = next(h for h in res.history if h["kind"] == "filter")
    train = next(h for h in res.history if h["kind"] == "train")
    assert flt["buffer"] == 2 and train["trajectories"] == flt["kept"]
