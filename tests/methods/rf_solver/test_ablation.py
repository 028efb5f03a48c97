"""RF-Edit ablation options (issue #13): V keys at the evaluation time, CFG halves, later-half blocks, and the grid."""

import json

import numpy as np
import pytest
import torch

from core.stats import bootstrap_ci, wilson
from methods.rf_solver.config import DiTConfig
from methods.rf_solver.edit import DiTVelocity, edit_sweep, later_half, resolve_blocks, rf_edit
from methods.rf_solver.experiment import edit_ablation
from methods.rf_solver.model import RFDiT
from methods.rf_solver.results import ABLATION_CFG, AblationResult
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.solver import invert, sample
from methods.rf_solver.vcache import VCache, VSharing

CFG = DiTConfig(width=32, heads=2, depth=5, single_from=2, cond_dim=8)


@pytest.fixture(scope="module")
def untrained():
    torch.manual_seed(0)
    model = RFDiT(CFG)
    with torch.no_grad():  # non-zero adaLN gates so V matters
        for p in model.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.05)
    return DiTVelocity(model.eval())


def _images(n=3):
    return torch.rand(n, 1, 16, 16, generator=torch.Generator().manual_seed(1)) * 2 - 1


def test_later_half_matches_flux_and_scales_down(untrained):
    assert later_half(range(38)) == tuple(range(20, 38))  # FLUX: single blocks with index > 19
    assert later_half((3, 4, 5)) == (5,)
    assert later_half((2, 3)) == (3,)  # never empty
    assert untrained.late_blocks == (2, 3, 4)
    assert resolve_blocks(untrained, "later_half") == (4,)
    assert resolve_blocks(untrained, None) == resolve_blocks(untrained, "all") == (2, 3, 4)
    assert resolve_blocks(untrained, [3]) == (3,)
    with pytest.raises(ValueError):
        resolve_blocks(untrained, "early")


class _Spy(VSharing):
    """Logs (evaluation time, key time, is_midpoint) of every recording or injection."""

    def before_eval(self, info):
        super().before_eval(info)
        self.t_eval = info.t

    def on_qkv(self, block_id, q, k, v):
        if self._key_time is not None and block_id in self.cache.blocks:
            self.log.append((getattr(self, "t_eval", None), *self._key_time))
        return super().on_qkv(block_id, q, k, v)


@pytest.mark.parametrize("order", [1, 2])
def test_eval_keys_record_v_at_the_time_it_is_injected(untrained, order):
    n, k = 6, 3
    ts = get_schedule(n, untrained.seq_len)
    x = _images(2)
    logs = {}
    for keying in ("interval", "eval"):
        with VCache(untrained.late_blocks) as cache:
            rec = _Spy(cache, k, "record", keying=keying)
            rec.log = []
            z1 = invert(untrained.velocity(1, 1.0, rec), x, ts, order, hooks=[rec]).z
            if keying == "eval":
                rec.arm(ts[0])
                rec.t_eval = ts[0]
                untrained.velocity(1, 1.0, rec)(z1, ts[0])
                rec.disarm()
            assert len(cache) == order * k * len(untrained.late_blocks)
            inj = _Spy(cache, k, "inject", keying=keying)
            inj.log = []
            sample(untrained.velocity(2, 1.0, inj), z1, ts, order, hooks=[inj])  # KeyError if a key is missing
            logs[keying] = (rec.log, inj.log)
    # injection: main evaluations at t_j use key t_j under both keyings
    for _, inj_log in logs.values():
        assert all(t == kt for t, kt, mid in inj_log if not mid)
    # recording: the spec keys a main evaluation by the interval's upper time (one interval above where it
    # was computed); "eval" keys it by its own time
    rec_int = [(t, kt) for t, kt, mid in logs["interval"][0] if not mid]
    rec_eval = [(t, kt) for t, kt, mid in logs["eval"][0] if not mid]
    assert rec_int and all(kt > t for t, kt in rec_int)
    assert rec_eval and all(kt == t for t, kt in rec_eval)
    assert {kt for _, kt in rec_eval} == set(ts[:k])


def test_eval_keys_edit_costs_one_extra_nfe(untrained):
    res = rf_edit(untrained, _images(), [1, 2, 3], [4, 5, 6], num_steps=5, inject_k=2, keying="eval")
    assert res.nfe == 2 * 2 * 5 + 1
    assert res.cached_tensors == 2 * 2 * len(untrained.late_blocks)
    base = rf_edit(untrained, _images(), [1, 2, 3], [4, 5, 6], num_steps=5, inject_k=2)
    assert not torch.allclose(res.edited, base.edited)  # the main evaluations get different V
    none = rf_edit(untrained, _images(), [1, 2, 3], [4, 5, 6], num_steps=5, inject_k=0, keying="eval")
    assert none.nfe == 20 and none.cached_tensors == 0


def test_cfg_halves_cond_keeps_the_null_half():
    cache = VCache([0])
    src = torch.full((2, 1, 3, 4), 7.0)
    cache.put((1.0, False, 0), src)
    v = torch.arange(4 * 12, dtype=torch.float32).reshape(4, 1, 3, 4)
    for halves, expect_null in (("both", src), ("cond", v[:2])):
        s = VSharing(cache, 1, "inject", cfg_halves=halves)
        s.arm(1.0)
        _, _, out = s.on_qkv(0, None, None, v)
        assert torch.equal(out[:2], expect_null) and torch.equal(out[2:], src)
    with pytest.raises(ValueError):
        VSharing(cache, 1, "inject", cfg_halves="null")
    with pytest.raises(ValueError):
        VSharing(cache, 1, "inject", keying="lower")


def test_cfg_halves_change_the_edit_only_under_guidance(untrained):
    x = _images()
    a = rf_edit(untrained, x, [1, 2, 3], [4, 5, 6], num_steps=4, inject_k=2, guidance=3.0)
    b = rf_edit(untrained, x, [1, 2, 3], [4, 5, 6], num_steps=4, inject_k=2, guidance=3.0, cfg_halves="cond")
    assert not torch.allclose(a.edited, b.edited)
    c = rf_edit(untrained, x, [1, 2, 3], [4, 5, 6], num_steps=4, inject_k=2, guidance=1.0)
    d = rf_edit(untrained, x, [1, 2, 3], [4, 5, 6], num_steps=4, inject_k=2, guidance=1.0, cfg_halves="cond")
    assert torch.allclose(c.edited, d.edited)


def test_sweep_variants_equal_single_edits(untrained):
    x, y, t = _images(), torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])
    variants = [(h, 2.0 if gv is None else gv) for _, h, gv in ABLATION_CFG]
    sweep = edit_sweep(untrained, x, y, t, (0, 2), num_steps=4, blocks="later_half", keying="eval", variants=variants)
    assert set(sweep) == {(k, h, g) for k in (0, 2) for h, g in variants}
    for k in (0, 2):
        for h, g in variants:
            one = rf_edit(
                untrained,
                x,
                y,
                t,
                num_steps=4,
                inject_k=k,
                guidance=g,
                blocks="later_half",
                keying="eval",
                cfg_halves=h,
            )
            assert torch.allclose(sweep[(k, h, g)], one.edited, atol=1e-5)


def test_wilson_and_bootstrap():
    lo, hi = wilson(40, 50)
    assert lo < 0.8 < hi and 0.66 < lo < 0.69 and 0.88 < hi < 0.90  # textbook values 0.670, 0.888
    vals = np.random.default_rng(0).normal(1.0, 1.0, 400)
    lo, hi = bootstrap_ci(vals).bounds
    assert lo < vals.mean() < hi and 0.15 < hi - lo < 0.25  # ≈ 2·1.96/√400 = 0.196


def _fake_result(shift_eval: float) -> AblationResult:
    """A grid where V keyed at the evaluation time lowers the k = 15 MSE by ``shift_eval`` and nothing else matters."""
    rng = np.random.default_rng(1)
    n, res = 60, AblationResult([0, 2, 15], 15, 2.0, 60, {}, {}, {}, [0, 10], {"all": [3, 4, 5], "later_half": [5]})
    base = rng.uniform(0.02, 0.06, n)
    for keys, cfg, blocks in res.cells():
        for k in res.ks:
            drop = shift_eval if (keys == "eval" and k == 15) else 0.0
            res.mses[(keys, cfg, blocks, k)] = base + 0.001 * k - drop + rng.normal(0, 1e-4, n)
            res.hits[(keys, cfg, blocks, k)] = rng.uniform(size=n) < 0.8
        res.recon[(keys, blocks, 0)] = base * 0.01
        res.recon[(keys, blocks, 10)] = base * 0.01 + (0.0 if keys == "eval" else 1e-4)
    return res


def test_factor_effects_find_the_factor_that_carries_the_effect():
    res = _fake_result(0.03)
    eff = {(e["factor"], e["metric"]): e for e in res.factor_effects(15)}
    assert eff[("keys", "mse")]["effect"] == pytest.approx(-0.03, abs=1e-3)
    lo, hi = eff[("keys", "mse")]["ci"]
    assert hi < 0
    for e in res.factor_effects(15):
        if e["factor"] != "keys" and e["metric"] == "mse":
            assert abs(e["effect"]) < 1e-3 and e["ci"][0] < 0 < e["ci"][1] or abs(e["effect"]) < 1e-4
    rows = res.cell_rows()
    assert len(rows) == 12 * 3


def test_report_tables_and_reading():
    from core.evidence import Evidence
    from methods.rf_solver.report import _ablation_markdown, _reading
    from methods.rf_solver.results import TradeoffResult

    res = _fake_result(0.03)
    md, summary = _ablation_markdown(res)
    assert md.count("| V into the conditional half only |") == 4 and "Factor effects" in md
    assert "0.8" in str(summary["k0_pass"])
    tr = TradeoffResult([0, 2, 15], [0.9, 0.8, 0.5], [0.0, 0.1, 0.3], [0.05, 0.04, 0.03], [0.01] * 3, 50, 15, 2.0)
    text = _reading(Evidence({}), {0: 1e-5, 10: 2e-5}, tr, res)
    assert "mostly to keys" in text and "falls as k grows" in text and "worse than without" in text


def test_edit_ablation_on_the_tiny_model(tiny_velocity, held_out_digits):
    x, y = held_out_digits.images[:6], held_out_digits.labels[:6]
    res = edit_ablation(tiny_velocity, x, y, ks=(0, 2), num_steps=4, batch=3, recon_steps=3)
    assert len(res.cells()) == 12 and res.num_images == 6
    for c in res.cells():
        assert res.hits[(*c, 0)].shape == (6,) and res.mses[(*c, 2)].shape == (6,)
    # k = 0 injects nothing: identical across keys and blocks for the same CFG handling
    assert np.array_equal(
        res.mses[("interval", ABLATION_CFG[0][0], "all", 0)], res.mses[("eval", ABLATION_CFG[0][0], "later_half", 0)]
    )
    # the same edit sampled alone
    from methods.rf_solver.metrics import mse

    g = torch.Generator().manual_seed(0)
    tgt = (y + torch.randint(1, 10, y.shape, generator=g)) % 10
    one = rf_edit(
        tiny_velocity,
        x[:3],
        y[:3],
        tgt[:3],
        num_steps=4,
        inject_k=2,
        keying="eval",
        blocks="later_half",
        cfg_halves="cond",
    )
    got = res.mses[("eval", ABLATION_CFG[1][0], "later_half", 2)][:3]
    assert np.allclose(got, mse(one.edited, x[:3]).numpy(), atol=1e-6)


def test_ablation_reproducer_writes_grid_and_reading(tiny_velocity):
    from core.evidence import Evidence, table_in
    from core.jobs import JobContext, get_reproducer
    from methods.rf_solver.experiment import run_ablation_reproduction

    spec = get_reproducer("rf_solver_ablation")
    assert spec.validate({"n_edit": 60, "offset": 200}).n_edit == 60
    with pytest.raises(Exception, match="297"):
        spec.validate({"n_edit": 100, "offset": 250})
    report = run_ablation_reproduction(JobContext(), offset=0, n_edit=3, preset="tiny")
    md = report.to_markdown()
    assert "## Reading" in md and "Factor effects" in md and "k0_target_acc_spec" in report.metrics
    assert md.count("| interval upper time (spec) |") >= 6  # 6 cells + reconstruction rows
    ev = Evidence.from_json(json.loads(report.pending_files()["results.json"]))
    assert ev.recompute() == [] and table_in(md) == ev.table() and len(ev.headlines) == 6
    assert len(ev.raw["cells"]) == 12 and len(ev.raw["cells"]["interval.g1.later_half"]["mse"]["k15"]) == 3


def test_ablation_headlines_follow_the_per_image_values():
    """The grid's verdicts come from the stored per-image values: a cell whose MSE rises with k fails the trade-off."""
    from methods.rf_solver.report import ablation_evidence

    n = 40
    rng = np.random.default_rng(0)
    base = rng.uniform(0.08, 0.12, n)
    cell = lambda up: {"hits": {"k0": [1] * n, "k15": [1] * (n - 2) + [0, 0]},  # noqa: E731
                       "mse": {"k0": list(base), "k15": list(base + up + rng.normal(0, 0.002, n))}}  # fmt: skip
    raw = {
        "ks": [0, 15],
        "recon_ks": [0, 10],
        "cells": {"interval.both.all": cell(0.02), "interval.cond.all": cell(-0.03)},
        "recon": {
            "interval.all": {"k0": list(base / 1e4), "k10": list(base / 1e4 * 2)},
            "eval.all": {"k0": list(base / 1e4), "k10": list(base / 1e4 * 0.8)},
        },
    }
    verdicts = [h.result["verdict"] for h in ablation_evidence(raw).headlines]
    assert verdicts == ["holds", "fails", "holds", "holds", "fails", "holds"]
    raw["cells"]["interval.both.all"]["hits"]["k0"] = [1] * 20 + [0] * 20  # half the k = 0 edits miss
    assert ablation_evidence(raw).headlines[0].result["verdict"] == "fails"


def test_reproducer_options_are_exactly_the_run_functions_keywords():
    """Both RF reproducers pass their validated options straight through as keywords."""
    import inspect

    from methods.rf_solver.experiment import run_ablation_reproduction, run_reproduction
    from methods.rf_solver.jobs import RfSolverAblationOptions, RfSolverOptions

    for opts, fn in ((RfSolverOptions, run_reproduction), (RfSolverAblationOptions, run_ablation_reproduction)):
        assert set(opts.model_fields) == set(inspect.signature(fn).parameters) - {"progress", "command"}, fn.__name__


def test_reproduction_report_keeps_per_item_values_and_recomputes(monkeypatch, tiny_velocity, held_out_digits):
    """``reproduce rf_solver``'s Report from small studies: results.json holds each sample's order and each image's
    MSE / target hit, the headline table is what they give, and the per-image values average to the tables' means."""
    from core.evidence import Evidence, table_in
    from methods.rf_solver import experiment
    from methods.rf_solver.report import reproduction_report

    real = experiment.reference_solve
    monkeypatch.setattr(experiment, "reference_solve", lambda f, x, a, b, n: real(f, x, a, b, 100))
    ana = experiment.analytic_study(n_points=40)
    x, y = held_out_digits.images[:4], held_out_digits.labels[:4]
    recon = experiment.reconstruction_study(tiny_velocity, x, y, "digits (held out)", step_counts=(5, 10))
    inj_per: dict[int, list[float]] = {}
    inj = experiment.injection_reconstruction_check(tiny_velocity, x, y, num_steps=4, ks=(0, 4), per_image=inj_per)
    tr = experiment.edit_tradeoff(tiny_velocity, x, y, (0, 2, 4, 8, 15), batch=4)
    about = {"config": {}, "row": ["tiny", 1, 150, 8, 1, 0.5]}
    info = {"command": "paperworks reproduce rf_solver", "seconds": 1.0, "machine": "test", "n_recon": 4,
            "n_edit": 4, "digits_model": "tiny", "scorer_heldout_acc": 0.97}  # fmt: skip
    report = reproduction_report(ana, recon, inj, inj_per, tr, None, models=[about], photo_sources=x,
                                 photo_sweep={k: x for k in (0, 2, 5, 15)}, info=info)  # fmt: skip
    ev = Evidence.from_json(json.loads(report.pending_files()["results.json"]))
    assert ev.recompute() == [] and table_in(report.to_markdown()) == ev.table()
    claims = [h.claim for h in ev.headlines]
    assert len(claims) == 6 and claims[0].startswith("RF-Solver-2 is second order")
    assert len(ev.raw["analytic"]["mog_order_rf2"]) == 10  # n_points // 4 mixture samples
    rows = {(r.solver, r.steps): r for r in recon}
    assert np.mean(ev.raw["recon"]["digits"]["N10"]["rf2"]) == pytest.approx(rows[("RF-Solver-2", 10)].mse)
    assert np.mean(ev.raw["recon"]["digits"]["N10"]["euler"]) == pytest.approx(rows[("Euler (equal NFE)", 20)].mse)
    assert np.mean(ev.raw["tradeoff"]["hits"]["k15"]) == pytest.approx(tr.target_acc[-1])
    assert np.mean(ev.raw["same_label"]["k4"]) == pytest.approx(inj[4])


def test_rf_solver_headlines_read_the_direction_of_each_claim():
    """A trade-off whose MSE rises with k fails; RF-Solver-2 worse than Euler fails; too few hits fail the bar."""
    from methods.rf_solver.report import evidence

    rng = np.random.default_rng(1)
    n = 30
    m0 = rng.uniform(0.08, 0.12, n)
    raw = {
        "analytic": {"mog_order_rf2": list(2.0 + rng.normal(0, 0.05, n)), "mog_order_euler": list(1.0 + 0 * m0)},
        "recon": {"digits": {"N10": {"rf2": list(m0 / 100), "euler": list(m0 / 10)}}},
        "same_label": {"k0": list(m0 / 1e4), "k10": list(m0 / 1e4 * 2)},
        "tradeoff": {"hits": {"k0": [1] * n, "k15": [1] * n}, "mse": {"k0": list(m0), "k15": list(m0 + 0.02)}},
    }
    verdicts = {h.claim.split(" (")[0]: h.result["verdict"] for h in evidence(raw).headlines}
    assert list(verdicts.values()) == ["holds", "holds", "fails", "holds", "fails", "not resolved"]
    raw["recon"]["digits"]["N10"] = {"rf2": list(m0 / 10), "euler": list(m0 / 100)}
    raw["tradeoff"]["hits"]["k0"] = [1] * 10 + [0] * 20
    v = [h.result["verdict"] for h in evidence(raw).headlines]
    assert v[1] == "fails" and v[3] == "fails"
