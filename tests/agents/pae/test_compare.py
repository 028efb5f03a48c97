"""``agents.pae.compare``: paired before/after success per reward arm, seeds pooled, with intervals."""

from __future__ import annotations

import random

import pytest
from typer.testing import CliRunner

from agents.pae import store
from agents.pae.compare import Pair, compare, load_pairs, markdown
from agents.pae.evaluator import Verdict
from agents.pae.rollout import Trajectory
from agents.pae.sites import build_sites
from core.stats import wilson


def test_wilson_matches_the_textbook_values():
    lo, hi = wilson(0, 48)
    assert lo == 0.0 and hi == pytest.approx(0.0741, abs=1e-3)  # a 0-of-48 rate is below ~7.4 %
    lo, hi = wilson(12, 48)
    assert (lo, hi) == (pytest.approx(0.1492, abs=1e-3), pytest.approx(0.3878, abs=1e-3))  # worked by hand
    assert wilson(0, 0, empty=(0.0, 1.0)) == (0.0, 1.0)  # what compare() records for an empty split


def _pairs(arm: str, run: str, seed: int, outcomes: list[tuple[int, int]]) -> list[Pair]:
    return [Pair(run, arm, seed, "test", f"t{i}", float(b), float(a)) for i, (b, a) in enumerate(outcomes)]


def test_changes_are_paired_and_arms_are_told_apart_only_when_the_interval_excludes_zero():
    gain = _pairs("oracle", "r1", 0, [(0, 1)] * 20 + [(1, 1)] * 10 + [(0, 0)] * 10)  # +20 of 40, never lost
    flat = _pairs("random", "r2", 0, [(0, 1)] * 5 + [(1, 0)] * 5 + [(0, 0)] * 30)  # +5 −5: no change
    out = compare(gain + flat, n_boot=500)
    rows = {(r["arm"], r["split"]): r for r in out["rows"]}
    g, f = rows[("oracle", "all")], rows[("random", "all")]
    assert (g["n"], g["before_solved"], g["after_solved"], g["gained"], g["lost"]) == (40, 10, 30, 20, 0)
    assert g["change"] == pytest.approx(0.5) and g["change_ci"][0] > 0.3
    assert f["change"] == 0.0 and f["change_ci"][0] < 0 < f["change_ci"][1]
    (v,) = out["versus"]
    assert v["arms"] == "oracle − random" and v["difference"] == pytest.approx(0.5) and v["ci"][0] > 0
    text = markdown(out)
    assert "| oracle | all | 0 | 40 | 25.0" in text and "+50.0" in text and "oracle − random" in text


def test_seeds_pool_and_each_run_is_resampled_on_its_own():
    a = _pairs("llm", "s0", 0, [(1, 1)] * 10)
    b = _pairs("llm", "s1", 1, [(0, 0)] * 10)
    row = compare(a + b, n_boot=200)["rows"][0]
    assert row["seeds"] == [0, 1] and row["runs"] == 2 and row["n"] == 20
    assert row["change_ci"] == (0.0, 0.0)  # no task changed in either run: no resample can move
    rng = random.Random(3)
    noisy = _pairs("llm", "s0", 0, [(rng.randint(0, 1), rng.randint(0, 1)) for _ in range(30)])
    r = compare(noisy, n_boot=300)["rows"][0]
    assert r["change_ci"][0] <= r["change"] <= r["change_ci"][1]


def _stored_run(reward: str, seed: int, before: list[float], after: list[float] | None) -> str:
    tasks = build_sites(seed)["shop"].template_tasks(random.Random(seed), len(before))
    run_id = store.create_run(name=f"compare-{reward}", config={"reward": reward, "seed": seed})
    rows = store.add_tasks(run_id=run_id, tasks=tasks, split="test")
    for it, outcomes in ((0, before), (3, after)):
        if outcomes is None:
            continue
        for slot, (task, ok) in enumerate(zip(tasks, outcomes)):
            traj = Trajectory(task=task, policy="test", answer="x")
            tid = store.save_trajectory(
                run_id=run_id, iteration=it, phase="test", slot=slot, task_row_id=rows[task.id], traj=traj
            )
            store.save_verdict(trajectory_id=tid, verdict=Verdict("oracle", ok, "by hand"))
    return run_id


def test_stored_runs_load_as_pairs_and_the_command_prints_and_writes_them(tmp_path):
    llm = _stored_run("llm", 0, [0, 1, 0], [1, 1, 0])
    rnd = _stored_run("random", 0, [0, 1, 0], [0, 0, 0])
    pairs = load_pairs([llm, rnd])
    assert sorted((p.arm, p.before, p.after) for p in pairs) == sorted(
        [("llm", 0, 1), ("llm", 1, 1), ("llm", 0, 0), ("random", 0, 0), ("random", 1, 0), ("random", 0, 0)]
    )
    from services.cli.main import app

    out = tmp_path / "cmp.md"
    r = CliRunner().invoke(app, ["pae", "compare", llm, rnd, "--out", str(out), "--n-boot", "200"])
    assert r.exit_code == 0, r.output
    assert "llm − random" in out.read_text() and "| llm | all | 0 | 3 | 33.3" in out.read_text()
    once = _stored_run("oracle", 0, [0, 1], None)
    bad = CliRunner().invoke(app, ["pae", "compare", once])
    assert bad.exit_code == 1 and "tested 1 time" in bad.output
    assert CliRunner().invoke(app, ["pae", "compare", "0" * 32]).exit_code == 1


def test_a_reproduction_reports_each_arms_change_from_its_stored_episodes():
    """The run report's headlines (agents.pae.report.run_evidence) pair each arm's test tasks before and after."""
    from types import SimpleNamespace

    from agents.pae.report import run_evidence

    up = [0.0] * 8 + [1.0] * 2
    results = {
        "llm": SimpleNamespace(run_id=_stored_run("llm", 0, up, [1.0] * 10)),
        "random": SimpleNamespace(run_id=_stored_run("random", 0, up, up)),
    }
    ev = run_evidence(results)
    got = {h.claim.split(":")[0]: h.result for h in ev.headlines}
    assert got["LLM judge (the method)"]["verdict"] == "holds" and got["LLM judge (the method)"]["n"] == 10
    assert got["random (count-matched)"]["verdict"] == "not resolved"  # no task changed
    assert got["judge − random reward"]["estimate"] == pytest.approx(0.8) and ev.recompute() == []
