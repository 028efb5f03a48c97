"""The evaluation harness: outputs stored once per key, resumed runs skip stored keys, fan-out as jobs."""

import numpy as np
import pytest

from core.stats import bootstrap_ci, bootstrap_diff_ci, mean_sd
from methods.llm_eval.harness import GenRequest, create_run, finish_run, run_requests, stored_outputs


def test_mean_se_matches_the_notebook_formula():
    v = [0.2, 0.4, 0.6, 0.8, 1.0]
    ms = mean_sd(v)
    assert ms.mean == pytest.approx(0.6)
    assert ms.se == pytest.approx(np.std(v, ddof=1) / np.sqrt(5))


def test_bootstrap_ci_brackets_the_mean_and_detects_a_difference():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 200), rng.normal(0.0, 1.0, 200)
    ci = bootstrap_ci(a)
    assert ci.low < a.mean() < ci.high and ci.excludes_zero()
    d = bootstrap_diff_ci(a, b)
    assert d.low > 0.5 and d.high < 1.5
    assert not bootstrap_ci(rng.normal(0, 1, 200)).excludes_zero()


def test_outputs_are_stored_and_a_rerun_generates_nothing(scripted_llm):
    provider = scripted_llm("harness", lambda m: "echo:" + m[-1]["content"])
    run_id = create_run("test", "scripted/harness")
    reqs = [GenRequest(key=f"k{i}", prompt=f"p{i}", max_tokens=5) for i in range(6)]
    outs = run_requests(reqs, model="scripted/harness", run_id=run_id, concurrency=3)
    assert [outs[f"k{i}"].text for i in range(6)] == [f"echo:p{i}" for i in range(6)]
    assert len(provider.calls["harness"]) == 6
    again = run_requests(reqs, model="scripted/harness", run_id=run_id)
    assert len(provider.calls["harness"]) == 6  # resumed from the table
    assert again["k3"].text == "echo:p3"
    stored = stored_outputs(run_id)
    assert set(stored) == {f"k{i}" for i in range(6)}
    finish_run(run_id, {"n": 6})


def test_a_failed_generation_is_kept_as_an_error_not_raised(scripted_llm):
    scripted_llm("harness-empty", [])
    outs = run_requests([GenRequest(key="x", prompt="p")], model="scripted/harness-empty")
    assert outs["x"].error and "ran out" in outs["x"].error


def test_jobs_mode_fans_out_batches_and_reads_the_rows_back(scripted_llm):
    from core.jobs import load_all
    from core.jobs.dispatch import register_sender

    load_all()
    provider = scripted_llm("harness-jobs", lambda m: m[-1]["content"].upper())
    previous = register_sender(lambda job: None)  # nobody consumes: wait() runs them here (steal)
    try:
        run_id = create_run("test", "scripted/harness-jobs")
        reqs = [GenRequest(key=f"j{i}", prompt=f"x{i}") for i in range(5)]
        outs = run_requests(
            reqs, model="scripted/harness-jobs", run_id=run_id, mode="jobs", batch_size=2, steal_after_s=0.0
        )
    finally:
        register_sender(previous)
    assert [outs[f"j{i}"].text for i in range(5)] == [f"X{i}" for i in range(5)]
    assert len(provider.calls["harness-jobs"]) == 5


def test_resume_reuses_an_unfinished_run_with_the_same_config():
    a = create_run("resume-test", "m", {"n": 1}, resume=True)
    assert create_run("resume-test", "m", {"n": 1}, resume=True) == a
    assert create_run("resume-test", "m", {"n": 2}, resume=True) != a
    finish_run(a, {})  # a finished run is reused too (same prompts, deterministic decoding) ...
    assert create_run("resume-test", "m", {"n": 1}, resume=True) == a
    finish_run(a, {}, status="failed")  # ... a failed one is not
    assert create_run("resume-test", "m", {"n": 1}, resume=True) != a
