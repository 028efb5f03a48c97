"""The DPCR learner on digits with a tiny CNN: frozen-backbone equivalence, growth, training."""

import numpy as np
import pytest
import torch

from methods.continual.data import load_digits_split, make_stream
from methods.continual.harness import run_sequence, torch_threads
from methods.dpcr import DPCRLearner, tiny_config
from methods.dpcr.ridge import joint_ridge, ridge_solution
from methods.dpcr.train import extract_features, kd_loss, random_shift


@pytest.fixture(scope="module")
def stream():
    return make_stream(load_digits_split(), classes_per_task=2, seed=1993, n_tasks=3)


def test_frozen_backbone_makes_dpcr_joint_ridge(stream):
    cfg = tiny_config(
        epochs_first=0,
        epochs_inc=0,
        current_term="clean",
        gamma=10.0,
        gamma_p=1e-14,
        arms=("lwf", "ridge_uncal", "tssp", "dpcr", "dpcr_literal", "dpcr_revive", "oracle"),
    )
    learner = DPCRLearner(cfg, seed=0)
    with torch_threads(1):
        for task in stream:
            learner.learn_task(task)
            if learner.last_projection is not None:
                P = learner.last_projection
                assert np.abs(P - np.eye(P.shape[0])).max() < 1e-6
        x = np.concatenate([t.x_train for t in stream])
        y = np.concatenate([t.y_train for t in stream])
        feats = extract_features(learner.net.backbone, x)
    J = joint_ridge(feats, y, 10.0, 6)
    for arm in ("dpcr", "tssp", "ridge_uncal", "dpcr_literal", "dpcr_revive"):
        W = ridge_solution(learner.arms[arm].memory, 10.0)
        assert np.abs(W - J).max() < 1e-8, arm
    x_test, _ = stream.test_upto(2)
    preds = {h: learner.predict(x_test, h) for h in ("dpcr", "tssp", "ridge_uncal", "oracle")}
    assert all((p == preds["oracle"]).all() for p in preds.values())


def test_two_tasks_of_training_grow_every_head(stream):
    cfg = tiny_config(tssp_passes=2, gamma_sweep=(1.0, 100.0))
    learner = DPCRLearner(cfg, seed=5)
    assert learner.heads == ("lwf", "ridge_uncal", "tssp", "dpcr", "dpcr_literal", "oracle", "dpcr_g1", "dpcr_g100")
    two = make_stream(load_digits_split(), classes_per_task=2, seed=1993, n_tasks=2)
    with pytest.raises(RuntimeError):
        learner.predict(two.tasks[0].x_test)
    with torch_threads(1):
        res = run_sequence(learner, two, seed=5)
    for arm in ("ridge_uncal", "tssp", "dpcr", "dpcr_literal"):
        w = learner.arms[arm].classifier.weight
        assert w.shape == (4, 16)
        np.testing.assert_allclose(np.linalg.norm(w, axis=1), 1.0, atol=1e-12)
    assert learner.oracle.weight.shape == (4, 16) and learner.net.head.n_classes == 4
    x, y = two.test_upto(1)
    for h in learner.heads:
        p = learner.predict(x, h)
        assert p.shape == y.shape and p.min() >= 0 and p.max() <= 3
    d = res.diagnostics[1]
    assert d["gamma"] in (1.0, 10.0, 100.0) and d["tssp_dev"] > 0 and d["kd"] >= 0
    assert {"shift_rel.dpcr", "shift_rel.ridge_uncal", "rank.dpcr"} <= set(d)
    # the memory of the first task's classes was moved by the shift estimate (tssp/dpcr) but not by ridge_uncal
    uncal = learner.arms["ridge_uncal"].memory.classes[0].mean
    assert not np.allclose(learner.arms["tssp"].memory.classes[0].mean, uncal)
    assert res.summary("oracle")["A_f"] > 0.5  # trained features separate the 4 digits


def test_sweep_over_every_ridge_arm_and_cip_energy_diagnostics(stream):
    arms = ("lwf", "ridge_uncal", "tssp", "dpcr", "dpcr_revive")
    cfg = tiny_config(tssp_passes=1, arms=arms, gamma_sweep=(1.0, 1e4), gamma_sweep_arms=("tssp", "dpcr_revive"))
    learner = DPCRLearner(cfg, seed=2)
    assert learner.heads == (*arms, "tssp_g1", "tssp_g10000", "dpcr_revive_g1", "dpcr_revive_g10000")
    two = make_stream(load_digits_split(), classes_per_task=2, seed=1994, n_tasks=2)
    with torch_threads(1):
        res = run_sequence(learner, two, seed=2)
    d = res.diagnostics[1]
    for arm in ("dpcr", "dpcr_revive"):
        per_class = [d[f"cip_energy.{arm}.c{c}"] for c in (0, 1)]
        assert all(-1e-9 <= v <= 1.0 for v in per_class)
        assert d[f"cip_energy.{arm}"] == pytest.approx(np.mean(per_class))
        assert f"dead_units.{arm}.c0" in d and f"cip_proto.{arm}.c1" in d
    assert "cip_energy.tssp.c0" not in d and d["gram_scale.dpcr"] > 0
    # the revive arm never removes more of a class's shifted energy than plain DPCR (it only adds axes back)
    assert d["cip_energy.dpcr_revive"] <= d["cip_energy.dpcr"] + 1e-9
    # γ = 1 of the sweep is the learner's own γ (picked from the default grid, smallest wins on 2 classes)
    x, _ = two.test_upto(1)
    if learner.gamma == 1.0:
        np.testing.assert_array_equal(learner.predict(x, "tssp_g1"), learner.predict(x, "tssp"))
    with pytest.raises(ValueError, match="gamma_sweep_arms"):
        tiny_config(gamma_sweep=(1.0,), gamma_sweep_arms=("lwf",))


def test_kd_loss_and_shift_augmentation():
    z_old = torch.tensor([[2.0, 0.0], [0.0, 1.0]])
    z = torch.tensor([[1.0, 1.0], [3.0, 0.0]])
    T = 2.0
    manual = -(torch.softmax(z_old / T, 1) * torch.log_softmax(z / T, 1)).sum(1).mean()
    assert torch.isclose(kd_loss(z, z_old, T), manual)
    x = torch.zeros(50, 1, 8, 8)
    x[:, 0, 4, 4] = 1.0
    out = random_shift(x, 1, torch.Generator().manual_seed(0))
    pos = out[:, 0].flatten(1).argmax(1)
    rows, cols = pos // 8, pos % 8
    assert (out.sum(dim=(1, 2, 3)) == 1).all()
    assert set(rows.tolist()) <= {3, 4, 5} and set(cols.tolist()) <= {3, 4, 5}
    assert len(set(zip(rows.tolist(), cols.tolist()))) > 4
    assert torch.equal(random_shift(x, 0, torch.Generator()), x)
