"""Rectified-flow training: the CPU run is bit-identical to the code before devices; it trains on another device.

The literal losses and EMA digest are the OUTPUT OF THE CODE BEFORE ``train`` took a device
(commit 3451c6d era: the drop mask, t and ε drawn on the CPU and used there), on the ``tiny``
preset shortened to 12 steps (3 warm-up), one thread. Cached models stay valid while this holds.
"""

from __future__ import annotations

import hashlib

import torch

from methods.rf_solver.config import get_preset
from methods.rf_solver.model import RFDiT
from methods.rf_solver.train import data_sampler, train

OLD_LOSSES = [
    1.717150330543518, 1.7449421882629395, 1.6328580379486084, 1.5969035625457764, 1.5701384544372559,
    1.4207277297973633, 1.4310561418533325, 1.366652011871338, 1.3587589263916016, 1.3087247610092163,
    1.3255929946899414, 1.2783665657043457,
]  # fmt: skip
OLD_EMA = "00fd75e15597bddfbd3d213bf6bd11d97bcbdbdc6add8dd9c9041c9d62901f05"


def _digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def _short(steps: int = 12):
    return get_preset("tiny").with_train(steps=steps, warmup=3, threads=1)


def test_cpu_training_is_bit_identical_to_the_code_before_devices():
    p = _short()
    torch.manual_seed(p.train.seed)
    seen = []
    r = train(p.train, RFDiT(p.model), data_sampler(p), callbacks=(lambda s, loss: seen.append((s, loss)),))
    assert r.losses == OLD_LOSSES
    assert seen == list(enumerate(OLD_LOSSES))  # callbacks still see every step's loss
    assert _digest(r.model) == OLD_EMA


def test_training_on_a_stand_in_accelerator_matches_the_cpu():
    from tests.devices import lazy_safe_views, stand_in_device

    p = _short(steps=4)
    torch.manual_seed(p.train.seed)
    on_cpu = train(p.train, RFDiT(p.model), data_sampler(p))
    torch.manual_seed(p.train.seed)
    with lazy_safe_views():
        on_dev = train(p.train, RFDiT(p.model), data_sampler(p), device=stand_in_device())
    assert all(t.device.type == "lazy" for t in on_dev.model.state_dict().values())  # the EMA copy too
    assert all(abs(a - b) < 1e-4 for a, b in zip(on_dev.losses, on_cpu.losses, strict=True))
    for (k, a), b in zip(on_dev.model.state_dict().items(), on_cpu.model.state_dict().values(), strict=True):
        assert torch.allclose(a.cpu(), b, atol=1e-4), k
