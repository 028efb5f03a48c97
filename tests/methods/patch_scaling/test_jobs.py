"""The registered train job and the reproducer, at a tiny size, in-process."""

from __future__ import annotations

import json

import pytest

from core.evidence import Evidence, table_in
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
    from methods.patch_scaling import experiment as rep

    monkeypatch.setattr(rep, "_cache_root", lambda: tmp_path)
    opts = Options(patches=[8, 4], seeds=2, epochs=1, backbones=["vit"], dispatch="inline")
    report = reproduce(opts, JobContext())
    assert len(list((tmp_path / "patch_scaling" / "runs").iterdir())) == 4  # one cached result per run
    again = reproduce(opts, JobContext())
    assert again.data["results"] == report.data["results"]
    assert len(report.data["results"]) == 4
    assert {r["tokens"] for r in report.data["results"]} == {1, 4}
    assert any("§7.5 thresholds" in t.title for t in report.tables)
    ev = Evidence.from_json(json.loads(again.pending_files()["results.json"]))
    assert ev.recompute() == [] and table_in(again.to_markdown()) == ev.table() and len(ev.headlines) == 2
    accs = {(r["patch"], r["seed"]): r["accuracy"] for r in report.data["results"]}
    assert ev.raw["sizes"]["8"]["vit"]["acc"]["p4"] == [accs[(4, 0)], accs[(4, 1)]]
    assert "4 of 4 runs came from the run cache" in again.to_markdown()
    unit = next(t for t in report.tables if t.title.startswith("§7 checks 1–4"))
    assert len(unit.rows) >= 10 and all(r[2] in (True, "tested") for r in unit.rows)
    assert "vit_spearman" in report.metrics


def test_longer_runs_train_the_two_ends_longer_and_the_reading_compares_them(tmp_path, monkeypatch):
    from methods.patch_scaling import experiment as rep
    from methods.patch_scaling import train

    calls = []

    def fake(backbone, patch, seed, *, image_size, epochs, device, amp, progress=None):  # acc grows with steps at p=1
        calls.append((backbone, patch, seed, epochs))
        assert (device, amp) == ("cpu", "off")
        acc = 0.9 if patch == 8 else (0.3 if epochs < 10 else 0.95)
        loss = 0.6 if patch == 8 or epochs >= 10 else 2.0
        tokens = (image_size // patch) ** 2
        return {
            "backbone": backbone,
            "patch": patch,
            "seed": seed,
            "accuracy": acc + seed * 0.01,
            "tokens": tokens,
            "flops": 1e6 * tokens,
            "train_s": 1.0,
            "final_loss": loss,
        }

    monkeypatch.setattr(rep, "_cache_root", lambda: tmp_path)
    monkeypatch.setattr(train, "train_eval", fake)
    opts = Options(patches=[8, 4, 1], seeds=2, epochs=3, backbones=["vit"], dispatch="inline", longer_epochs=12)
    report = reproduce(opts, JobContext())
    longer = [c for c in calls if c[3] == 12]
    assert sorted(longer) == [("vit", 1, 0, 12), ("vit", 8, 0, 12)]  # the two ends, one seed (longer_seeds = 1)
    table = next(t for t in report.tables if t.title.startswith("More training"))
    assert [r[:3] for r in table.rows] == [["vit", 8, 3], ["vit", 8, 12], ["vit", 1, 3], ["vit", 1, 12]]
    assert table.rows[2][3] == "30.0 ± 0.0" and table.rows[3][3] == "95.0 ± 0.0"  # seed 0 only, at both lengths
    reading = next(s for s in report.sections if s.title == "Reading").markdown
    assert "vit (final training loss 2.00)" in reading  # the 3-epoch p = 1 cell is flagged as untrained
    assert "vit p = 1 goes from 30.0 % at 3 epochs to 95.0 %" in reading and "+5.0 points" in reading
    assert len(report.data["longer"]) == 2
    off = reproduce(Options(patches=[8, 1], seeds=1, epochs=3, backbones=["vit"], dispatch="inline"), JobContext())
    assert (
        not any(t.title.startswith("More training") for t in off.tables)
        and "longer_epochs=100" in next(s for s in off.sections if s.title == "Reading").markdown
    )


def test_headlines_are_paired_by_seed_and_read_the_claimed_direction():
    """The gap claim (≥ 2 points) and the ordering claim (ρ ≥ 0.8) from every seed: a law that holds in every seed
    holds; p = 1 worse than p = 8 in every seed fails; the variant size gets its own rows."""
    from methods.patch_scaling.report import evidence, sweep_raw

    def runs(size, accs):  # accs: p → per-seed accuracy
        return [{"backbone": "adventurer", "patch": p, "seed": s, "accuracy": a, "train_s": 1.0, "final_loss": 0.6}
                for p, per in accs.items() for s, a in enumerate(per)]  # fmt: skip

    law = runs(8, {8: [0.90, 0.91, 0.89], 4: [0.93, 0.94, 0.92], 2: [0.95, 0.95, 0.94], 1: [0.97, 0.96, 0.965]})
    worse = runs(16, {16: [0.97, 0.98, 0.975], 8: [0.95, 0.96, 0.95], 4: [0.93, 0.92, 0.94], 2: [0.90, 0.91, 0.89]})
    raw = {"sizes": {"8": sweep_raw(law), "16": sweep_raw(worse)},
           "baselines": {"8": {"logreg": 0.97}, "16": {"logreg": 0.97}}}  # fmt: skip
    got = {h.claim: h.result["verdict"] for h in evidence(raw).headlines}
    assert list(got.values()) == ["holds", "holds", "fails", "fails"]
    assert list(got)[2].startswith("Tiny-Adventurer, 16×16: p = 2 beats p = 16")
    assert raw["sizes"]["8"]["adventurer"]["rho"] == [1.0, 1.0, 1.0]


def test_reading_separates_untrained_from_trained_but_worse_p1():
    from types import SimpleNamespace

    from methods.patch_scaling.report import _why, aggregate

    def res(b, p, acc, loss):
        return {
            "backbone": b,
            "patch": p,
            "seed": 0,
            "accuracy": acc,
            "tokens": 64 // p**2,
            "flops": 1.0,
            "train_s": 1.0,
            "final_loss": loss,
        }

    agg = aggregate(
        [
            res("vit", 8, 0.98, 0.6),
            res("vit", 1, 0.40, 2.0),
            res("adventurer", 8, 0.98, 0.6),
            res("adventurer", 1, 0.94, 0.54),
        ]
    )
    text = _why(agg, SimpleNamespace(epochs=30, longer_epochs=0), None)
    assert "p = 1 models of vit (final training loss 2.00)" in text and "adventurer (final" not in text
    assert "adventurer p = 1 did train: its final training loss (0.54) is as low as p = 8's (0.60)" in text
    assert "-4.0 points" in text


def test_run_cache_key_ignores_the_device(monkeypatch):
    from methods.patch_scaling import experiment as rep

    monkeypatch.setattr(rep, "_cache_root", lambda: "/c")
    params = TrainParams(backbone="vit", patch=4, seed=2, epochs=3)
    key = rep._cache_path(rep.run_key(params.model_copy(update={"device": "cuda"})))
    # the key the code before devices gave these params (runs cached then stay valid)
    assert str(key) == "/c/patch_scaling/runs/d1f447f95e20acbf.json"
    assert key == rep._cache_path(rep.run_key(params))
    assert rep._cache_path(rep.run_key(params.model_copy(update={"amp": "bf16"}))) != key  # another computation


@pytest.mark.parametrize(
    ("device", "amp", "steal"), [("cpu", "off", 60.0), ("cuda", "bf16", None), ("auto", "off", None)]
)
def test_sweep_sub_jobs_carry_device_and_amp_and_gpu_jobs_are_never_stolen(monkeypatch, device, amp, steal):
    import contextlib

    from core.db import crud
    from core.db import session as db_session
    from core.jobs import dispatch
    from methods.patch_scaling import experiment as rep

    queued, waited = [], {}

    def enqueue(name, params, idempotency_key=None, **_kw):
        queued.append((name, params))
        return f"job-{len(queued)}"

    def wait(ids, *, timeout, steal_after=None, progress=None, **kw):
        waited["steal_after"] = steal_after

    def report_for(_s, job_id):
        p = queued[int(job_id.split("-")[1]) - 1][1]
        res = {"backbone": p["backbone"], "patch": p["patch"], "seed": p["seed"], "accuracy": 0.5}
        return type("R", (), {"body": {"data": {"result": {**res, "tokens": 1, "flops": 1, "train_s": 1.0}}}})

    monkeypatch.setattr(dispatch, "use_jobs", lambda *_a: True)
    monkeypatch.setattr(dispatch, "enqueue", enqueue)
    monkeypatch.setattr(dispatch, "wait", wait)
    monkeypatch.setattr(crud, "get_report_for_job", report_for)
    monkeypatch.setattr(db_session, "session_scope", contextlib.nullcontext)
    opts = Options(patches=[8, 4], seeds=1, epochs=1, backbones=["vit"], dispatch="jobs", device=device, amp=amp)
    results = rep.run_all(opts, JobContext())
    assert [r["patch"] for r in results] == [8, 4]
    assert [n for n, _ in queued] == ["patch_scaling.train"] * 2
    assert all((p["device"], p["amp"]) == (device, amp) for _, p in queued)
    assert waited["steal_after"] == steal


def test_train_job_records_where_it_ran():
    r = run_train(TrainParams(backbone="vit", patch=8, epochs=1), JobContext())
    assert r.metrics["device"] == "cpu" and r.metrics["dtype"] == "float32" and "gpu" not in r.metrics
    assert r.data["result"]["device"] == "cpu" and r.metrics["final_loss"] > 0


def test_sweep_on_cuda_without_cuda_fails_before_training(monkeypatch):
    import torch

    from core.device import DeviceUnavailable
    from methods.patch_scaling import train

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(train, "train_eval", lambda *a, **k: pytest.fail("trained"))
    opts = Options(patches=[8, 4], seeds=1, epochs=1, backbones=["vit"], dispatch="inline", device="cuda")
    with pytest.raises(DeviceUnavailable):
        reproduce(opts, JobContext())


def test_upsampled_digits_span_at_most_64_dimensions():
    """The Reading's claim: 16×16 digits are bilinear 8×8 ones, so one p = 16 token (d = 64) is no bottleneck."""
    import torch

    from methods.patch_scaling.data import load_split

    xtr, _, xte, _ = load_split(16)
    flat = torch.cat([xtr, xte]).flatten(1).double()
    s = torch.linalg.svdvals(flat - flat.mean(0))
    assert flat.shape[1] == 256 and int((s > 1e-8 * s[0]).sum()) <= 64
