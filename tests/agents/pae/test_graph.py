"""The PAE graph's control flow, storage and resume, driven by a scripted gateway policy (fast)."""

from __future__ import annotations

import pytest

from agents.pae import store
from agents.pae.config import RunConfig
from agents.pae.dispatch import InlineDispatcher
from agents.pae.loop import run_pae

pytestmark = pytest.mark.integration


def _policy(messages):
    """Answers map zip-code questions from the page, otherwise gives up ("N/A")."""
    user = messages[-1]["content"]
    if "zip code of" in user and "/map/place/" in user:
        page = user.split("Page text:", 1)[1]
        zips = [w.strip(",") for w in page.split() if w.strip(",").isdigit() and len(w.strip(",")) == 5]
        return f"Thought: the address shows it.\nAction: ANSWER; [{zips[0] if zips else 'N/A'}]"
    if "zip code of" in user and "/map/search" not in user:
        name = user.split("zip code of", 1)[1].split("?")[0].strip()
        return f"Thought: search it.\nAction: Type [1]; [{name}]"
    if "zip code of" in user:
        return "Thought: open the first result.\nAction: Click [3]"
    return "Thought: I give up.\nAction: ANSWER; [N/A]"


class CrashOnce(InlineDispatcher):
    """Dies after storing part of the second rollout batch (a worker killed mid-iteration)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def rollouts(self, **params):
        self.calls += 1
        if params["phase"] == "rollout" and self.calls == 2:
            params["assignments"] = params["assignments"][:1]
            super().rollouts(**params)
            raise RuntimeError("worker lost")
        return super().rollouts(**params)


class Recording(InlineDispatcher):
    """Notes the sampling temperature each rollout batch was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, float]] = []

    def rollouts(self, **params):
        self.seen.append((params["phase"], params["temperature"]))
        return super().rollouts(**params)


def test_loop_stores_everything_and_resumes(scripted_llm):
    scripted_llm("pae-graph", _policy)
    cfg = RunConfig(
        name="graph-test",
        reward="oracle",  # the sanity arm: the loop's plumbing with the sites' ground truth
        train_sites=["map"],
        heldout_sites=["news"],
        tasks_per_site=4,
        test_tasks_per_site=1,
        iterations=1,
        rollouts_per_iteration=3,
        policy_model="scripted/pae-graph",
        judge_tests=False,
        max_steps=4,
        wait_s=0.0,
    )
    crash = CrashOnce()
    with pytest.raises(RuntimeError, match="worker lost"):
        run_pae(cfg, dispatcher=crash)
    (run,) = [r for r in store.list_runs() if r["name"] == "graph-test"]
    failed = store.get_run(run_id=run["id"])
    assert failed["status"] == "failed" and failed["metrics"]["error"] == "RuntimeError: worker lost"
    partial = store.trajectory_rows(run_id=run["id"], phase="rollout")
    assert [r["slot"] for r in partial] == [0]

    rec = Recording()
    res = run_pae(cfg, run_id=run["id"], dispatcher=rec)
    assert store.get_run(run_id=run["id"])["status"] == "finished"
    # the test samples at the rollouts' temperature, as the paper's agent does (greedy only when asked)
    assert rec.seen == [("rollout", 1.0), ("test", 1.0)]
    kinds = [h["kind"] for h in res.history]
    assert kinds == ["propose", "sft", "test", "collected", "rollout", "filter", "train", "test"]
    rows = store.trajectory_rows(run_id=run["id"], phase="rollout")
    assert sorted(r["slot"] for r in rows) == [0, 1, 2]  # the stored slot was kept, not replayed
    assert rows[0]["id"] == partial[0]["id"]
    zips = [r for r in rows if "zip code" in r["question"]]
    assert all(r["oracle_reward"] == r["reward"] for r in rows)
    assert all(r["reward"] == 1.0 for r in zips) and all(r["length"] == 3 for r in zips)
    flt = next(h for h in res.history if h["kind"] == "filter")
    assert flt["upper_bound"] == pytest.approx(len({r["task_id"] for r in zips}) / len({r["task_id"] for r in rows}))
    detail = store.trajectory_detail(trajectory_id=rows[0]["id"])
    assert all(s["screenshots"].get("before") for s in detail["steps"])
    assert detail["verdicts"][0]["evaluator"] == "oracle"
    test = [h for h in res.history if h["kind"] == "test"]
    assert set(test[0]["success"]) == {"test", "heldout_site"}
    assert res.report.tables and any(a.name == "curves.png" for a in res.report.artifacts)
    assert res.report.metrics["test_decoding"] == "sampled, T = 1.0" and res.report.metrics["pae_update_lr"] == cfg.lr
    (conf,) = [t for t in res.report.tables if t.title.startswith("Configuration")]
    assert ["reward", '"oracle"'] in [list(r) for r in conf.rows]
    # running a finished run again changes nothing
    again = run_pae(cfg, run_id=run["id"], dispatcher=InlineDispatcher())
    assert len(store.trajectory_rows(run_id=run["id"])) == len(store.trajectory_rows(run_id=res.run_id))
    assert [h["kind"] for h in again.history] == kinds
