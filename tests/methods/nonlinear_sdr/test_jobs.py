"""The registered jobs and the reproducer: fit on bundled data and on a CSV, simulation batches, fan-out."""

import numpy as np
import pytest

from core.jobs import InvalidParams, get_method, get_reproducer, null_context


def _run(method, params):
    spec = get_method(method)
    return spec.run(spec.validate(params), null_context())


def test_fit_on_a_bundled_dataset_reports_plot_directions_and_cv():
    rep = _run("nonlinear_sdr.fit", {"dataset": "wine", "method": "linear", "n_components": 2})
    assert rep.metrics["d"] == 2 and rep.metrics["p"] == 13 and rep.metrics["problems"] == 3
    assert rep.artifact("sufficient_plot.png") is not None
    assert len(rep.data["directions"]) == 13 and len(rep.data["directions"][0]) == 2
    assert len(rep.data["predictors"]) == 178
    # wine's classes separate on two sufficient predictors: far above the 40% majority class
    assert rep.metrics["cv_sdr"] > 0.9 and rep.metrics["cv_all"] > 0.9


def test_fit_on_an_uploaded_csv(tmp_path):
    from core.artifacts import get_artifact_store

    rng = np.random.default_rng(0)
    x = rng.standard_normal((120, 4))
    y = x[:, 0] ** 2 + x[:, 1] ** 2 + 0.1 * rng.standard_normal(120)
    lines = ["a,b,c,d,target"] + [",".join(f"{v:.5f}" for v in [*row, t]) for row, t in zip(x, y)]
    lines.append("1.0,,2.0,3.0,4.0")  # a row with a missing value is dropped
    sha = get_artifact_store().put_bytes("\n".join(lines).encode(), name="t.csv").sha256
    rep = _run("nonlinear_sdr.fit", {"csv_sha256": sha, "response": "target", "method": "kernel", "evaluate": False})
    assert rep.metrics["n"] == 120 and rep.metrics["p"] == 4
    assert rep.data["directions"] is None  # nonlinear: functions, not directions
    g1 = np.array(rep.data["predictors"])[:, 0]
    r = x[:, 0] ** 2 + x[:, 1] ** 2
    assert abs(np.corrcoef(np.argsort(np.argsort(g1)), np.argsort(np.argsort(r)))[0, 1]) > 0.8


def test_csv_errors_are_clear():
    from methods.nonlinear_sdr.fit import read_csv

    with pytest.raises(ValueError, match="no column 'y'"):
        read_csv(b"a,b\n1,2\n", "y")
    with pytest.raises(ValueError, match="numeric"):
        read_csv(b"a,b,y\n1,x,2\n" * 20, "y")
    with pytest.raises(ValueError, match="complete rows"):
        read_csv(b"a,y\n1,2\n", "y")
    with pytest.raises(InvalidParams, match="response"):
        get_method("nonlinear_sdr.fit").validate({"csv_sha256": "0" * 64})


def test_simulate_batch_returns_one_result_per_seed():
    rep = _run("nonlinear_sdr.simulate", {"model": "C3", "n": 150, "p": 5, "seeds": [0, 1], "estimators": ["PSVM"]})
    res = rep.data["results"]
    assert len(res) == 2 and set(res[0]) == {"PSVM"}
    assert all(r["PSVM"]["dist"] < 0.6 and r["PSVM"]["rho"] > 0.9 for r in res)


TINY = {
    "preset": "smoke",
    "models": ["M1"],
    "ns": [100],
    "ps": [5],
    "reps": 2,
    "estimators": ["SIR", "PSVM"],
    "contamination": [0.2],
    "contamination_models": ["M1"],
    "contamination_n": 100,
    "lam_sweep": [1.0],
    "datasets": [],
    "c3_ns": [100, 200],
    "c3_reps": 1,
}


def test_reproducer_fans_replications_out_as_jobs(tmp_path):
    """With a sender registered the batches become recorded jobs (run here by the sender) and come back."""
    from core.jobs.dispatch import register_sender
    from core.jobs.lifecycle import execute_job

    sent = []

    def send(job):
        sent.append(job.method)
        execute_job(job.id)

    previous = register_sender(send)
    try:
        path = get_reproducer("nonlinear_sdr").run(tmp_path, null_context(), {**TINY, "dispatch": "jobs", "chunk": 1})
    finally:
        register_sender(previous)
    # main (1) + contamination (2) + λ sweep (2 models) settings × 2 replications, one per job
    assert sent == ["nonlinear_sdr.simulate"] * 10
    text = path.read_text()
    assert "Subspace distance" in text and "Spec §7 checks" in text and "## Reading" in text
    assert (tmp_path / "nonlinear_sdr" / "results.json").exists()


def test_settings_run_inline_without_a_worker():
    from core.jobs.dispatch import NoSender, register_sender
    from methods.nonlinear_sdr.experiment import run_settings
    from methods.nonlinear_sdr.jobs import Options

    opts = Options.model_validate({**TINY, "reps": 3, "chunk": 2})
    settings = [{"model": "C3", "n": 100, "p": 4, "estimators": ["PSVM"]}]
    previous = register_sender(None)
    try:
        (res,) = run_settings(settings, opts, null_context())
        with pytest.raises(NoSender):
            run_settings(settings, opts.model_copy(update={"dispatch": "jobs"}), null_context())
    finally:
        register_sender(previous)
    assert len(res) == 3 and all("dist" in r["PSVM"] for r in res)
