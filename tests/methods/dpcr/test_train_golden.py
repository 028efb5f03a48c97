"""DPCR's LwF training runs on ``core.train.fit``: bit-identical to the loop it had before (golden runs).

The literal numbers below are the OLD loop's output (``methods/dpcr/train.py`` before it moved onto
``core.train.fit``), recorded on this machine with one torch thread; :func:`_old_train_task` is that
loop verbatim, so the exact comparison also holds where another CPU rounds differently.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from methods.continual.data import load_digits_split, make_stream
from methods.continual.harness import run_sequence, torch_threads
from methods.dpcr import DPCRLearner, tiny_config
from methods.dpcr.config import DPCRConfig
from methods.dpcr.model import build_net
from methods.dpcr.train import frozen_copy, kd_loss, random_shift, train_task

# Per-step losses of the old loop on _problem() (cosine head), task 1 then task 2.
OLD_TASK1 = [
    0.6610757112503052,
    0.7463579773902893,
    0.6689848899841309,
    0.6685261130332947,
    0.6715154051780701,
    0.669692873954773,
    0.6534308791160583,
    0.6572902202606201,
    0.6326555013656616,
]
OLD_TASK2 = [
    7.6218342781066895,
    7.608097076416016,
    7.655775547027588,
    7.58785343170166,
    7.492334842681885,
    7.577569007873535,
]
OLD_STATS1 = {"ce": 0.6508195400238037, "kd": math.nan}


def _old_train_task(net, x, y, *, n_old, cfg, old_net, generator):
    """The loop before the migration (its progress calls left out)."""
    first = old_net is None
    epochs = cfg.epochs_first if first else cfg.epochs_inc
    lr = cfg.lr_first if first else cfg.lr_inc
    wd = cfg.wd_first if first else cfg.wd_inc
    milestones = list(cfg.milestones_first if first else cfg.milestones_inc)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=cfg.momentum, weight_decay=wd)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=milestones, gamma=0.1)
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.long) - n_old
    n = len(xt)
    stats = {"ce": float("nan"), "kd": float("nan")}
    for _epoch in range(epochs):
        net.train()
        perm = torch.randperm(n, generator=generator)
        ce_sum = kd_sum = 0.0
        for start in range(0, n, cfg.batch_size):
            idx = perm[start : start + cfg.batch_size]
            xb = random_shift(xt[idx], cfg.augment_shift, generator)
            logits = net(xb)
            loss = ce = F.cross_entropy(logits[:, n_old:], yt[idx])
            if not first:
                with torch.no_grad():
                    old_logits = old_net(xb)
                kd = kd_loss(logits[:, :n_old], old_logits, cfg.kd_temperature)
                loss = ce + cfg.kd_lambda * kd
                kd_sum += kd.item() * len(idx)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ce_sum += ce.item() * len(idx)
        sched.step()
        stats = {"ce": ce_sum / n, "kd": kd_sum / n if not first else float("nan")}
    net.eval()
    return stats


def _data(seed: int, n: int, lo: int) -> tuple[np.ndarray, np.ndarray]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 8, 8, generator=g).numpy(), (lo + torch.arange(n) % 2).numpy()


def _cfg(head: str) -> DPCRConfig:
    # batch 16 of 40 samples: a short last batch; two chained milestones in task 1 (lr 0.1 -> 0.01 -> 0.001)
    return tiny_config(
        channels=(4, 8, 8),
        batch_size=16,
        epochs_first=3,
        milestones_first=(1, 2),
        epochs_inc=2,
        milestones_inc=(1,),
        head=head,
    )


def _two_tasks(train, head: str):
    """Train task 1 (CE) then task 2 (CE + KD) with ``train``; per-step losses, stats and the net."""
    cfg = _cfg(head)
    torch.manual_seed(0)
    net = build_net(cfg.channels, cfg.head, cfg.cosine_scale_init)
    gen = torch.Generator().manual_seed(5)
    out = []
    old = None
    for task, (seed, lo) in enumerate(((1, 0), (2, 2))):
        net.head.add_classes(2)
        x, y = _data(seed, 40, lo)
        losses: list[float] = []
        backward = torch.Tensor.backward

        def record(self, *a, _losses=losses, _backward=backward, **k):
            _losses.append(float(self.detach()))
            return _backward(self, *a, **k)

        torch.Tensor.backward = record
        try:
            stats = train(net, x, y, n_old=lo, cfg=cfg, old_net=old, generator=gen)
        finally:
            torch.Tensor.backward = backward
        out.append((losses, stats, {k: v.clone() for k, v in net.state_dict().items()}))
        if task == 0:
            old = frozen_copy(net)
    return out


def _same_stats(a: dict[str, float], b: dict[str, float]) -> bool:
    return all((math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in ("ce", "kd"))


@pytest.mark.parametrize("head", ["cosine", "linear"])
def test_lwf_training_on_fit_is_bit_identical_to_the_old_loop(head):
    with torch_threads(1):
        new = _two_tasks(train_task, head)
        old = _two_tasks(_old_train_task, head)
    for (nl, ns, nw), (ol, os_, ow) in zip(new, old, strict=True):
        assert nl == ol  # every step's loss, exactly
        assert _same_stats(ns, os_), (ns, os_)
        assert nw.keys() == ow.keys() and all(torch.equal(nw[k], ow[k]) for k in nw)  # weights and BN buffers
    if head == "cosine":  # and the old loop still gives the numbers recorded before the migration
        assert old[0][0] == pytest.approx(OLD_TASK1, rel=1e-6) and old[1][0] == pytest.approx(OLD_TASK2, rel=1e-6)
        assert old[0][1]["ce"] == pytest.approx(OLD_STATS1["ce"], rel=1e-6)


def test_a_learner_run_reproduces_the_old_accuracies_and_losses():
    """Two digits tasks through the whole learner (training, features, TSSP, ridge arms): the old numbers."""
    two = make_stream(load_digits_split(), classes_per_task=2, seed=1993, n_tasks=2, samples_per_class=40)
    cfg = tiny_config(
        channels=(4, 8, 8), tssp_passes=2, epochs_first=2, milestones_first=(1,), epochs_inc=2, milestones_inc=(1,)
    )
    with torch_threads(1):
        res = run_sequence(DPCRLearner(cfg, seed=5), two, seed=5)
    # recorded from the old code (accuracy = correct / n, so exact fractions)
    assert res.matrices["lwf"][1] == pytest.approx([0.7289719626168224, 0.0])
    assert res.matrices["dpcr"][1] == pytest.approx([0.4672897196261682, 0.35185185185185186])
    assert res.matrices["oracle"][1] == pytest.approx([0.6261682242990654, 0.037037037037037035])
    assert res.matrices["ridge_uncal"][0][0] == pytest.approx(0.7663551401869159)
    d1, d2 = res.diagnostics
    assert d1["ce"] == pytest.approx(0.6033315539360047, rel=1e-6)
    assert d2["ce"] == pytest.approx(0.7268301486968994, rel=1e-6)
    assert d2["kd"] == pytest.approx(0.6938227891921998, rel=1e-6)
    assert d2["tssp_dev"] == pytest.approx(0.7737870134182219, rel=1e-6)
    assert d2["gram_scale.dpcr"] == pytest.approx(10.129888047183275, rel=1e-6)
