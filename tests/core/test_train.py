"""core.train: the schedule, AdamW + clipping loop, seeding and thread pinning the methods share."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch
from torch import nn

from core.train import adamw, fit, lr_at, pin_threads, seed_everything


def _old_any4_lr(step, lr, warmup, steps):  # methods/any4/clean_model.py before core.train
    if step < warmup:
        return lr * (step + 1) / warmup
    frac = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def _old_rf_lr(step, lr, warmup, steps):  # methods/rf_solver/train.py before core.train
    if step < warmup:
        return lr * (step + 1) / warmup
    frac = (step - warmup) / max(1, steps - warmup)
    return lr * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))


def test_schedule_values_at_known_steps():
    kw = {"lr": 1e-3, "warmup": 10, "steps": 110}
    assert lr_at(0, **kw) == pytest.approx(1e-4)
    assert lr_at(9, **kw) == pytest.approx(1e-3)  # end of warm-up: the peak
    assert lr_at(10, **kw) == pytest.approx(1e-3)
    assert lr_at(60, **kw) == pytest.approx(0.5e-3)  # half way through the cosine
    assert lr_at(110, **kw) == pytest.approx(0.0, abs=1e-15)
    assert lr_at(500, **kw) == pytest.approx(0.0, abs=1e-15)  # held after the end
    assert lr_at(60, **kw, min_ratio=0.1) == pytest.approx(0.55e-3)
    assert lr_at(110, **kw, min_ratio=0.1) == pytest.approx(1e-4)
    assert lr_at(0, lr=1e-3, warmup=0, steps=5) == pytest.approx(1e-3)  # no warm-up starts at the peak


@pytest.mark.parametrize(("lr", "warmup", "steps"), [(3e-3, 30, 600), (1e-3, 10, 100), (2e-4, 0, 7), (5e-4, 50, 50)])
def test_schedule_is_bit_identical_to_the_methods_old_formulas(lr, warmup, steps):
    for step in range(steps):
        assert lr_at(step, lr=lr, warmup=warmup, steps=steps, min_ratio=0.1) == _old_any4_lr(step, lr, warmup, steps)
        assert lr_at(step, lr=lr, warmup=warmup, steps=steps) == _old_rf_lr(step, lr, warmup, steps)


def test_schedule_refuses_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        lr_at(0, lr=1e-3, warmup=0, steps=0)
    with pytest.raises(ValueError, match="min_ratio"):
        lr_at(0, lr=1e-3, warmup=0, steps=5, min_ratio=1.5)


def _problem(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    x, y = torch.randn(64, 4), torch.randn(64, 1)
    gen = torch.Generator().manual_seed(seed)

    def batch(_step):
        idx = torch.randint(0, 64, (16,), generator=gen)
        return x[idx], y[idx]

    return model, batch


def _mse(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()


def test_fit_matches_a_hand_written_loop_exactly():
    """The loop the methods had (set lr, batch, loss, zero_grad, backward, clip 1.0, step)."""
    kw = {"steps": 25, "lr": 1e-2, "warmup": 5, "weight_decay": 0.1}
    model, batch = _problem()
    losses = fit(model, batch, _mse, clip=1.0, betas=(0.9, 0.95), min_lr_ratio=0.1, **kw)

    ref, ref_batch = _problem()
    opt = torch.optim.AdamW(ref.parameters(), lr=kw["lr"], betas=(0.9, 0.95), weight_decay=kw["weight_decay"])
    ref.train()
    ref_losses = []
    for step in range(kw["steps"]):
        for g in opt.param_groups:
            g["lr"] = _old_any4_lr(step, kw["lr"], kw["warmup"], kw["steps"])
        loss = _mse(ref, ref_batch(step))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ref.parameters(), 1.0)
        opt.step()
        ref_losses.append(float(loss.detach()))
    assert losses == ref_losses
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters(), strict=True))
    assert not model.training  # eval mode afterwards


def test_clipping_bounds_the_gradient_norm():
    norms = {}

    def big_loss(model, batch):
        return 1e4 * _mse(model, batch)

    for clip in (0.5, None):
        model, batch = _problem()
        fit(model, batch, big_loss, steps=1, lr=1e-3, warmup=0, weight_decay=0.0, clip=clip)
        norms[clip] = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()])).item()
    assert norms[0.5] == pytest.approx(0.5, rel=1e-4) and norms[None] > 10


def test_fit_calls_hooks_and_reports_progress():
    model, batch = _problem()
    seen, reports = [], []
    losses = fit(
        model,
        batch,
        _mse,
        steps=4,
        lr=1e-3,
        warmup=1,
        weight_decay=0.0,
        on_step=lambda s, v: seen.append((s, v)),
        progress=lambda f, m: reports.append((f, m)),
        message="demo step",
    )
    assert seen == list(enumerate(losses))
    assert [f for f, _ in reports] == [0.25, 0.5, 0.75, 1.0] and reports[-1][1].startswith("demo step 4/4 loss ")


def test_fit_takes_an_iterable_and_says_when_it_runs_out():
    model, batch = _problem()
    items = [batch(i) for i in range(3)]
    assert len(fit(model, items, _mse, steps=3, lr=1e-3, warmup=0, weight_decay=0.0)) == 3
    with pytest.raises(ValueError, match="ran out at step 3"):
        fit(model, iter(items), _mse, steps=4, lr=1e-3, warmup=0, weight_decay=0.0)
    with pytest.raises(ValueError, match="clip"):
        fit(model, items, _mse, steps=3, lr=1e-3, warmup=0, weight_decay=0.0, clip=0)


def test_seeding_makes_runs_reproducible():
    def run():
        seed_everything(123)
        draws = (random.random(), float(np.random.rand()), float(torch.rand(1)))
        model = nn.Linear(3, 1)  # initialised from torch's global generator
        x = torch.randn(32, 3)
        losses = fit(model, lambda _s: x, lambda m, b: m(b).pow(2).mean(), steps=5, lr=1e-2, warmup=1, weight_decay=0.0)
        return draws, losses, [p.detach().clone() for p in model.parameters()]

    a, b = run(), run()
    assert a[0] == b[0] and a[1] == b[1]
    assert all(torch.equal(p, q) for p, q in zip(a[2], b[2], strict=True))
    seed_everything(124)
    assert random.random() != a[0][0]


def test_pin_threads_restores_the_old_count():
    before = torch.get_num_threads()
    target = 1 if before != 1 else 2
    with pin_threads(target) as n:
        assert n == target == torch.get_num_threads()
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="boom"), pin_threads(target):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with pin_threads(0) as n:  # 0 / None: leave torch's count alone
        assert n == before
    with pytest.raises(ValueError, match=">= 0"), pin_threads(-1):
        pass


def test_adamw_uses_the_given_hyper_parameters():
    opt = adamw(nn.Linear(2, 2).parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.95))
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.AdamW)
    assert (group["lr"], group["weight_decay"], group["betas"]) == (3e-3, 0.01, (0.9, 0.95))


# --- devices, groups, schedules, accumulation, early stop (issue #46) ---------------------------


def _golden_losses():
    """The first five losses of `_problem()` under the default fit, as the pre-device loop gave them."""
    model, batch = _problem()
    return fit(model, batch, _mse, steps=5, lr=1e-2, warmup=2, weight_decay=0.1)


def test_fit_on_an_explicit_cpu_device_with_amp_off_is_bit_identical():
    model, batch = _problem()
    on_cpu = fit(model, batch, _mse, steps=5, lr=1e-2, warmup=2, weight_decay=0.1, device="cpu", amp="off")
    assert on_cpu == _golden_losses()
    for sync in (1, 2, 7):  # reading losses back in chunks changes nothing
        m, b = _problem()
        assert fit(m, b, _mse, steps=5, lr=1e-2, warmup=2, weight_decay=0.1, sync_every=sync) == _golden_losses()


def test_fit_moves_the_model_and_each_batch_to_the_device():
    """On the meta device a batch left on the CPU would raise; fit must move it as it comes."""
    model, batch = _problem()
    seen = []

    def loss(m, b):
        seen.append(b[0].device.type)
        return _mse(m, b)

    losses = fit(model, batch, loss, steps=3, lr=1e-2, device="meta")
    assert len(losses) == 3 and all(math.isnan(v) for v in losses)  # shapes only: nothing to read back
    assert seen == ["meta"] * 3
    assert all(p.device.type == "meta" for p in model.parameters())


def test_param_groups_made_before_the_move_train_the_moved_parameters():
    """Moving to some devices (lazy, meta) replaces the Parameter objects; the groups must follow them."""
    from tests.devices import stand_in_device

    dev = stand_in_device()
    model, batch = _problem()
    first, last = model[0], model[2]
    groups = [
        {"params": [first.weight, last.weight], "weight_decay": 0.1},
        {"params": (p for p in [first.bias, last.bias])},  # a generator: read once
    ]
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    fit(model, batch, _mse, steps=3, lr=1e-2, param_groups=groups, device=dev)
    assert all(p.device.type == "lazy" for p in model.parameters())
    for n, p in model.named_parameters():
        assert not torch.equal(p.detach().cpu(), start[n]), f"{n} was not trained"


def test_bf16_autocast_runs_the_forward_in_bfloat16():
    model, batch = _problem()
    dtypes = []

    def loss(m, b):
        out = m[0](b[0])
        dtypes.append(out.dtype)
        return _mse(m, b)

    losses = fit(model, batch, loss, steps=3, lr=1e-2, device="cpu", amp="bf16")
    assert dtypes == [torch.bfloat16] * 3 and all(math.isfinite(v) for v in losses)
    assert all(p.dtype == torch.float32 for p in model.parameters())  # master weights stay fp32


def test_param_groups_keep_their_own_rates_under_the_schedule():
    model, batch = _problem()
    first, second = model[0], model[2]
    rates = []
    fit(
        model,
        batch,
        _mse,
        steps=4,
        lr=1e-2,
        warmup=2,
        param_groups=[{"params": first.parameters(), "lr": 1e-3}, {"params": second.parameters()}],
        after_step=lambda s: rates.append(None),
        optimizer=lambda groups: _Recorder(groups, rates),
    )
    # step 0 of a 2-step warm-up: half of each group's base rate
    assert rates[0] == (pytest.approx(5e-4), pytest.approx(5e-3))
    assert rates[2] == (pytest.approx(1e-3), pytest.approx(1e-2))  # the peak


class _Recorder(torch.optim.SGD):
    def __init__(self, groups, log):
        super().__init__(groups, lr=1.0)
        self._log = log

    def step(self, closure=None):
        self._log.append(tuple(g["lr"] for g in self.param_groups))
        return super().step(closure)


def test_a_schedule_function_and_another_optimizer_replace_the_defaults():
    model, batch = _problem()
    ref, ref_batch = _problem()
    fit(
        model,
        batch,
        _mse,
        steps=6,
        lr=0.05,
        clip=None,
        schedule=lambda s, base: base / (1 + s),
        optimizer=lambda groups: torch.optim.SGD(groups, lr=0.05, momentum=0.9),
    )
    opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    for step in range(6):
        for g in opt.param_groups:
            g["lr"] = 0.05 / (1 + step)
        opt.zero_grad()
        _mse(ref, ref_batch(step)).backward()
        opt.step()
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters(), strict=True))


def test_gradient_accumulation_matches_one_big_batch():
    torch.manual_seed(0)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    big = nn.Linear(4, 1)
    small = nn.Linear(4, 1)
    small.load_state_dict(big.state_dict())
    fit(big, lambda s: (x, y), _mse, steps=3, lr=1e-2, clip=None)
    halves = [(x[:16], y[:16]), (x[16:], y[16:])]
    losses = fit(small, lambda i: halves[i % 2], _mse, steps=3, lr=1e-2, clip=None, accumulate=2)
    assert len(losses) == 3
    for a, b in zip(big.parameters(), small.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_stop_ends_training_early_at_a_sync_point():
    model, batch = _problem()
    losses = fit(model, batch, _mse, steps=50, lr=1e-2, sync_every=5, stop=lambda step, seen: len(seen) >= 10)
    assert len(losses) == 10


def test_micro_batches_give_a_short_step_scaled_as_if_full():
    """Three steps of 2, 2 and 1 micro-batches (a short last step, as PAE's BC epochs end) equal the hand loop."""
    torch.manual_seed(0)
    xs, ys = torch.randn(5, 3, 4), torch.randn(5, 3, 1)
    model, ref = nn.Linear(4, 1), nn.Linear(4, 1)
    ref.load_state_dict(model.state_dict())
    sizes = [2, 2, 1]
    losses = fit(
        model,
        lambda i: (xs[i], ys[i]),
        _mse,
        steps=3,
        lr=1e-2,
        clip=None,
        schedule=lambda step, base: base,
        accumulate=2,
        micro_batches=lambda step: sizes[step],
    )
    opt = torch.optim.AdamW(ref.parameters(), lr=1e-2, weight_decay=0.0)
    expected, i = [], 0
    for n in sizes:
        opt.zero_grad(set_to_none=True)
        seen = []
        for _ in range(n):
            loss = _mse(ref, (xs[i], ys[i]))
            (loss / 2).backward()  # divided by the nominal accumulation, also in the short step
            seen.append(float(loss))
            i += 1
        opt.step()
        expected.append(sum(seen) / n)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters(), strict=True))
    assert losses == pytest.approx(expected, rel=1e-6)
    with pytest.raises(ValueError, match="micro_batches"):
        fit(nn.Linear(4, 1), lambda i: (xs[0], ys[0]), _mse, steps=1, lr=1e-2, micro_batches=lambda step: 0)


def test_a_schedule_may_set_the_weight_decay_of_each_step():
    """A schedule returning {"lr", "weight_decay"} equals a hand loop that sets both every step (M3-JEPA's AGD)."""
    model, batch = _problem()
    ref, ref_batch = _problem()

    def hyper(step, base):
        return {"lr": base / (1 + step), "weight_decay": 0.01 * (step + 1)}

    fit(model, batch, _mse, steps=5, lr=0.05, clip=None, schedule=hyper)
    opt = torch.optim.AdamW(ref.parameters(), lr=0.05, weight_decay=0.0)
    for step in range(5):
        for g in opt.param_groups:
            g.update(hyper(step, 0.05))
        opt.zero_grad(set_to_none=True)
        _mse(ref, ref_batch(step)).backward()
        opt.step()
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters(), strict=True))
    again, _ = _problem()
    fit(again, _problem()[1], _mse, steps=5, lr=0.05, clip=None, schedule=lambda s, base: base / (1 + s))
    assert not all(torch.equal(a, b) for a, b in zip(again.parameters(), ref.parameters(), strict=True))
