"""Registrations, the ``lada.xtail`` job on an untrained tiny CLIP, the baselines, and the reproduce report builder."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from pydantic import ValidationError

from core.evidence import Evidence, table_in
from core.jobs import null_context
from methods.continual.xtail import XTailExperiment, XTailRun
from methods.lada.jobs import XTailParams, run


@pytest.fixture
def patched_substrate(monkeypatch, tiny_backbone, small_pools, small_features):
    import methods.lada.experiment as experiment

    monkeypatch.setattr(
        experiment,
        "substrate",
        lambda preset="default", device="cpu": (tiny_backbone, Path("tiny"), small_pools, small_features),
    )


def test_params_validate_method_options_and_domains():
    assert XTailParams().resolved_options()["epochs"] == 30  # the cpu preset
    assert XTailParams(options={"beta": 2.0}).resolved_options()["beta"] == 2.0
    with pytest.raises(ValidationError, match="beta"):
        XTailParams(options={"beta": -1})
    with pytest.raises(ValidationError, match="repeat"):
        XTailParams(domains=["digits", "digits"])
    with pytest.raises(ValidationError):
        XTailParams(method="dpcr")
    with pytest.raises(ValidationError, match="extra|no_such"):
        XTailParams(method="xtail_rail", options={"no_such": 1})


def test_job_runs_lada_over_the_union_and_reports_the_matrix(patched_substrate):
    params = XTailParams(method="lada", preset="quick", domains=["shapes", "textures"], shots=3, seeds=2)
    report = run(params, null_context())
    exp = report.data["experiment"]
    assert exp["domains"] == ["shapes", "textures"] and len(exp["runs"]) == 2
    A = np.asarray(exp["runs"][0]["matrices"]["lada"])
    assert A.shape == (2, 2) and not np.isnan(A).any()
    assert set(report.metrics) == {"transfer", "average", "last", "device", "dtype"}
    assert report.metrics["device"] == "cpu" and report.metrics["dtype"] == "float32"
    assert "matrix.png" in report.pending_files()


def test_rail_is_the_joint_ridge_solution_and_falls_back_to_zero_shot(make_stream):
    from methods.lada.baselines import RailLearner, ZeroShotLearner
    from methods.lada.config import RailConfig

    stream = make_stream(domains=("colours", "shapes"))
    rail = RailLearner(RailConfig(hidden_dim=64), seed=0, stream=stream)
    zs = ZeroShotLearner.__new__(ZeroShotLearner)
    zs.scale, zs.text = rail.scale, rail.text
    x1 = stream.tasks[1].test
    before = rail.scores(x1)
    assert torch.allclose(before, torch.softmax(zs.scores(x1), 1))  # nothing learned: zero-shot probabilities
    for task in stream:
        rail.learn_task(task, null_context())
    phi = torch.cat([rail._phi(t.train.features) for t in stream])
    y = torch.nn.functional.one_hot(torch.cat([t.y_train for t in stream]), stream.n_classes).double()
    joint = torch.linalg.solve(phi.t() @ phi + 0.1 * torch.eye(64, dtype=torch.float64), phi.t() @ y)
    assert torch.allclose(rail.weight, joint, atol=1e-8)


def test_finetune_changes_both_towers_and_lwf_distils(make_stream):
    from methods.lada.baselines import FinetuneLearner
    from methods.lada.config import FinetuneConfig

    stream = make_stream(domains=("colours", "shapes"), shots=2)
    ft = FinetuneLearner(FinetuneConfig(epochs=1, lr=1e-2, kd_lambda=1.0), seed=0, stream=stream)
    before = {k: v.clone() for k, v in ft.model.state_dict().items()}
    for task in stream:
        ft.learn_task(task, null_context())
    changed = {k.split(".")[1] for k, v in ft.model.state_dict().items() if not torch.equal(v, before[k])}
    assert {"vision_model", "text_model"} <= changed
    assert ft.scores(stream.tasks[0].test).shape == (len(stream.tasks[0].y_test), stream.n_classes)


def _exp(last):
    A = np.full((3, 3), 0.3)
    A[2] = last
    return XTailExperiment("x", ["h"], ["colours", "digits", "objects"], {"lr": 1e-4, "epochs": 1, "hidden_dim": 8, "ridge": 0.1,
                           "fusion_weight": 0.9}, [XTailRun(0, [], {"h": A.tolist()}, {"h": A.tolist()})])  # fmt: skip


def test_reproduce_report_puts_paper_numbers_checks_and_reading_beside_ours():
    from methods.lada.experiment import direction_checks, unit_checks
    from methods.lada.jobs import LadaOptions
    from methods.lada.report import build_report

    keys = ["zeroshot", "finetune", "lwf", "rail", "bf", "bf_dpt", "lada_noproto", "lada"]
    exps = {k: _exp(0.2 + 0.05 * i) for i, k in enumerate(keys)}
    lada_opts = {"lambda1": 16, "lambda2": 4, "gmm_covariance": "diag", "beta": 5.0, "alpha": 1.0, "adapter_bottleneck": 64,
                 "adapter_scale": 0.1, "prompt": "a photo of a {}.", "lr_memory": 1e-2, "lr_adapter": 1e-3, "epochs": 30,
                 "batch_size": 64, "old_loss_reduction": "sum"}  # fmt: skip
    exps["lada"].options = lada_opts
    checks = unit_checks() + direction_checks(exps)
    assert all(c["pass"] for c in checks), checks
    report = build_report(exps, {k: k for k in keys}, checks, options=LadaOptions(), seeds=[0], folder="f", elapsed=1.0,
                          cpu=1.0, logit_scale=50.0)  # fmt: skip
    md = report.to_markdown()
    assert "83.1" in md and "Dual-RAIL" in md  # the paper's numbers
    assert "9a Last(LADA) > Last(BF)" in md and "| pass |" in md
    ev = Evidence.from_json(json.loads(report.pending_files()["results.json"]))
    assert ev.recompute() == [] and table_in(md) == ev.table() and report.sections[0].markdown == ev.table()
    assert ev.raw["lada"]["last"] == [pytest.approx(0.55)] and ev.raw["zeroshot"]["transfer"] == [pytest.approx(0.3)]
    claims = {h.claim: h for h in ev.headlines}
    assert claims["LADA beats Primal-RAIL on Last"].result["verdict"] == "not resolved"  # one seed: no interval
    assert "## Reading" in md and "BF < BF + DPT < BF + DPT + LADA" in md and md.index("Reading") < md.index("Setup")
