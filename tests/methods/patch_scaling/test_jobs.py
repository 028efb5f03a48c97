"""The registered train job and the reproducer, at a tiny size, in-process."""

from __future__ import annotations

import pytest

from core.jobs import JobContext
from methods.patch_scaling.jobs import Options, TrainParams, reproduce, run_train
from methods.patch_scaling.report import aggregate, checks


def test_train_job_reports_accuracy_tokens_and_flops():
    r = run_train(TrainParams(backbone="adventurer", patch=4, epochs=1), JobContext())
    assert r.metrics["tokens"] == 4
    assert 0.15 < r.metrics["accuracy"] <= 1.0  # one epoch already beats the 10 % majority class
    assert r.metrics["flops"] > 0 and r.data["result"]["patch"] == 4


def test_params_reject_patch_larger_than_image():
    with pytest.raises(ValueError):
        TrainParams(patch=16, image_size=8)


def test_checks_use_gap_and_spearman():
    res = [
        {"backbone": "vit", "patch": p, "accuracy": a, "flops": 1, "train_s": 1.0, "tokens": (8 // p) ** 2}
        for p, a in [(8, 0.5), (4, 0.7), (2, 0.8), (1, 0.9)]
    ]
    c = checks(aggregate(res))["vit"]
    assert c["gap_points"] == pytest.approx(40.0) and c["gap_ok"] and c["rho"] == pytest.approx(1.0)
    res[-1]["accuracy"] = 0.4
    c = checks(aggregate(res))["vit"]
    assert not c["gap_ok"] and not c["rho_ok"]


def test_param_groups_follow_deit_no_decay():
    from methods.patch_scaling.model import build
    from methods.patch_scaling.train import param_groups

    m = build("adventurer", image_size=8, patch=4)
    decay, no_decay = param_groups(m, 0.05)
    assert decay["weight_decay"] == 0.05 and no_decay["weight_decay"] == 0.0
    names = {id(p): n for n, p in m.named_parameters()}
    nd = {names[id(p)] for p in no_decay["params"]}
    assert {"pos_embed", "cls_token", "blocks.0.mixer.A_log", "blocks.0.mixer.dt_bias", "blocks.0.mixer.D"} <= nd
    assert "blocks.0.norm1.weight" in nd and "head.bias" in nd
    d = {names[id(p)] for p in decay["params"]}
    assert {"patch_embed.proj.weight", "head.weight", "blocks.0.mixer.in_proj.weight"} <= d
    assert len(d) + len(nd) == len(names)


def test_reproducer_tiny_inline(tmp_path, monkeypatch):
    from methods.patch_scaling import report as rep

    monkeypatch.setattr(rep, "_cache_root", lambda: tmp_path)
    opts = Options(patches=[8, 4], seeds=1, epochs=1, backbones=["vit"], dispatch="inline")
    report = reproduce(opts, JobContext())
    assert len(list((tmp_path / "patch_scaling" / "runs").iterdir())) == 2  # one cached result per run
    again = reproduce(opts, JobContext())
    assert again.data["results"] == report.data["results"]
    assert len(report.data["results"]) == 2
    assert {r["tokens"] for r in report.data["results"]} == {1, 4}
    assert any(t.title.startswith("§7.5") for t in report.tables)
    unit = next(t for t in report.tables if t.title.startswith("§7 checks 1–4"))
    assert len(unit.rows) >= 10 and all(r[2] in (True, "tested") for r in unit.rows)
    assert "vit_spearman" in report.metrics
