"""ROLLOUT and EVALUATE: collect trajectories on random proposed tasks, then reward them.

Each of the iteration's ``rollouts_per_iteration`` slots draws a task uniformly at
random from the training pool (``random_task: True`` in the paper), seeded by the run
seed and the iteration, so a resumed iteration replays the same plan and only plays
the slots that are not stored yet. With the oracle as reward, only tasks with a
reference can be drawn (LLM-proposed tasks have none).

The evaluator's verdict becomes the training reward: the LLM judge's (the method, the
default), the oracle's (a labelled sanity arm), or (control) exactly as many positives
as the judge arm gave — ``random_positives[it]`` when the run is told the judge arm's
counts, else the judge's count on this same batch — placed on answered trajectories
drawn at random, so the control trains on as much data, uncorrelated with success.
"""

from __future__ import annotations

import random
from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.pae import store
from agents.pae.evaluator import Verdict, random_rewards
from agents.pae.nodes.common import dispatcher_of, load_config, rollout_params
from agents.pae.state import PaeState


def rollout(state: PaeState, config: RunnableConfig) -> dict[str, Any]:
    run_id, it = state["run_id"], state.get("iteration", 0)
    cfg = load_config(run_id)
    pool = [
        (rid, t)
        for rid, t, _ in store.load_tasks(run_id=run_id, split="train")
        if cfg.reward != "oracle" or t.has_reference
    ]
    if not pool:
        raise RuntimeError("the training task pool is empty")
    rng = random.Random(f"rollout:{cfg.seed}:{it}")
    assignments = [(slot, rng.choice(pool)[0]) for slot in range(cfg.rollouts_per_iteration)]
    ids = dispatcher_of(config).rollouts(
        **rollout_params(
            cfg,
            run_id=run_id,
            iteration=it,
            phase="rollout",
            assignments=assignments,
            policy=state["policy"],
            temperature=cfg.temperature,
        )
    )
    return {"history": [{"kind": "collected", "iteration": it, "trajectories": len(ids)}]}


def evaluate(state: PaeState, config: RunnableConfig) -> dict[str, Any]:
    run_id, it = state["run_id"], state.get("iteration", 0)
    cfg = load_config(run_id)
    rows = store.trajectory_rows(run_id=run_id, phase="rollout", iteration=it)
    given = cfg.random_positives[it] if cfg.random_positives and it < len(cfg.random_positives) else None
    counts = dispatcher_of(config).evaluate(
        trajectory_ids=[r["id"] for r in rows],
        judge=cfg.reward == "llm" or (cfg.reward == "random" and given is None),
        judge_model=cfg.judge_model,
        judge_max_tokens=cfg.judge_max_tokens,
        judge_retries=cfg.judge_retries,
    )
    rows = store.trajectory_rows(run_id=run_id, phase="rollout", iteration=it)
    oracle = [r["oracle_reward"] for r in rows if r["oracle_reward"] is not None]
    p_oracle = sum(oracle) / len(oracle) if oracle else 0.0
    judge_positives = sum(1 for r in rows if (r["judge_reward"] or 0) > 0)
    coins: dict[str, float] = {}
    if cfg.reward == "random":
        k = given if given is not None else judge_positives
        coins = random_rewards([r["id"] for r in rows if r["answer"] is not None], k, f"{cfg.seed}:{it}")
    for r in rows:
        if cfg.reward == "oracle":
            reward = r["oracle_reward"] or 0.0
        elif cfg.reward == "llm":
            reward = r["judge_reward"] or 0.0
        else:
            reward = coins.get(r["id"], 0.0)
            note = f"random reward: {sum(coins.values()):.0f} positives on random answered trajectories"
            store.save_verdict(trajectory_id=r["id"], verdict=Verdict("random", reward, note, called=False))
        store.set_reward(trajectory_id=r["id"], reward=reward)
    rows = store.trajectory_rows(run_id=run_id, phase="rollout", iteration=it)
    n = max(1, len(rows))
    record = {
        "kind": "rollout",
        "iteration": it,
        "n": len(rows),
        "reward": sum(r["reward"] or 0 for r in rows) / n,
        "oracle_success": p_oracle,
        "judge_success": (sum(r["judge_reward"] or 0 for r in rows) / n) if cfg.reward != "oracle" else None,
        "positives": sum(1 for r in rows if (r["reward"] or 0) > 0),
        "judge_positives": judge_positives,
        "judge_unparsable": (counts or {}).get("judge_unparsable", 0),
        "answered": sum(r["answer"] is not None for r in rows) / n,
        "timeout_rate": sum(r["timed_out"] for r in rows) / n,
        "format_error_rate": sum(r["format_errors"] for r in rows) / max(1, sum(r["length"] for r in rows)),
        "mean_length": sum(r["length"] for r in rows) / n,
    }
    return {"history": [record]}
