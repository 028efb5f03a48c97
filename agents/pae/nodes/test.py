"""TEST: the current policy on held-out tasks, unseen sites and WebArena map tasks (sampled at T = 1.0 by default, as in the paper).

The metric is the success rate per site and averaged, under the oracle (the sites'
ground truth); the LLM judge's verdicts on the same trajectories measure the
judge's agreement with the oracle.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.pae import store
from agents.pae.evaluator import agreement
from agents.pae.nodes.common import dispatcher_of, load_config, rollout_params
from agents.pae.state import PaeState

TEST_SPLITS = ("test", "heldout_site", "webarena")


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Success per split and per site (oracle), and the judge's agreement where it voted."""
    by_split: dict[str, list[float]] = defaultdict(list)
    by_site: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        o = r["oracle_reward"] or 0.0
        by_split[r["split"]].append(o)
        by_site[f"{r['split']}/{r['site']}"].append(o)
    pairs = [
        (r["judge_reward"], r["oracle_reward"])
        for r in rows
        if r["judge_reward"] is not None and r["oracle_reward"] is not None
    ]
    return {
        "success": {k: sum(v) / len(v) for k, v in by_split.items()},
        "per_site": {k: sum(v) / len(v) for k, v in sorted(by_site.items())},
        "n": {k: len(v) for k, v in by_split.items()},
        "n_per_site": {k: len(v) for k, v in sorted(by_site.items())},
        "answered": sum(r["answer"] is not None for r in rows) / max(1, len(rows)),
        "agreement": agreement(pairs),
    }


def test(state: PaeState, config: RunnableConfig) -> dict[str, Any]:
    run_id, it = state["run_id"], state.get("iteration", 0)
    cfg = load_config(run_id)
    tasks = [(rid, t) for split in TEST_SPLITS for rid, t, _ in store.load_tasks(run_id=run_id, split=split)]
    tested = list(state.get("tested") or [])
    if not tasks:
        return {"tested": [*tested, it], "history": [{"kind": "test", "iteration": it, "note": "no test tasks"}]}
    ids = dispatcher_of(config).rollouts(
        **rollout_params(
            cfg,
            run_id=run_id,
            iteration=it,
            phase="test",
            assignments=list(enumerate(rid for rid, _ in tasks)),
            policy=state["policy"],
            temperature=cfg.test_temperature,
        )
    )
    dispatcher_of(config).evaluate(
        trajectory_ids=ids,
        judge=cfg.judge_tests,
        judge_model=cfg.judge_model,
        judge_max_tokens=cfg.judge_max_tokens,
        judge_retries=cfg.judge_retries,
    )
    rows = store.trajectory_rows(run_id=run_id, phase="test", iteration=it)
    record = {"kind": "test", "iteration": it, **summarize(rows)}
    store.update_run(run_id=run_id, metrics={f"test_{it}": record})
    return {"tested": [*tested, it], "history": [record]}
