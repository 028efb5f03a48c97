"""``train_eval`` on :func:`core.train.fit` reproduces the old own loop bit for bit (CPU, fp32).

The literal losses, accuracies and weight digests below are the OUTPUT OF THE OLD CODE
(``methods/patch_scaling/train.py`` before it moved onto ``core.train.fit``, commit 3451c6d),
recorded on a tiny configuration: 8×8 digits, p = 4, seed 3, 2 epochs of batch 128 (20 AdamW
steps: 2 warm-up steps, then cosine; the batch order is redrawn at the epoch boundary), width 16,
depth 2. Adventurer's scan is pinned to the chunked PyTorch implementation, so a change of the
``auto`` CPU kernel cannot move these numbers. Cached runs of the sweep stay valid only while this
test passes.
"""

from __future__ import annotations

import hashlib

import pytest
import torch
import torch.nn.functional as F

from methods.patch_scaling import train as train_mod
from methods.patch_scaling.model import build as real_build

OLD = {
    "vit": {
        "losses": [
            2.414278507232666, 2.4741506576538086, 2.3005940914154053, 2.35718035697937, 2.340017318725586,
            2.3007595539093018, 2.2020645141601562, 2.2775704860687256, 2.292335033416748, 2.253994941711426,
            2.2566967010498047, 2.2523112297058105, 2.212301015853882, 2.2558693885803223, 2.2311604022979736,
            2.189077377319336, 2.193439245223999, 2.193364381790161, 2.2149815559387207, 2.1903634071350098,
        ],
        "accuracy": 0.28518518805503845,
        "weights": "533208ba0778981a4ff4e2f61064564ceea06624e4591128020000aba0f402a7",
    },
    "adventurer": {
        "losses": [
            2.43833327293396, 2.464021921157837, 2.4042320251464844, 2.330686092376709, 2.3591105937957764,
            2.3362464904785156, 2.2972159385681152, 2.330111503601074, 2.319183349609375, 2.3038904666900635,
            2.305551528930664, 2.269969940185547, 2.271763324737549, 2.2997324466705322, 2.247363328933716,
            2.252377986907959, 2.2337214946746826, 2.252166271209717, 2.252729892730713, 2.273299217224121,
        ],
        "accuracy": 0.16851851344108582,
        "weights": "3b747dd1ce45dfe00f3d22f844b9cd957b3b0ad7cca7a72320e0bfcfe618e5d2",
    },
}  # fmt: skip


def _digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("backbone", ["vit", "adventurer"])
def test_train_eval_on_fit_is_bit_identical_to_the_old_loop(backbone, monkeypatch):
    built: list[torch.nn.Module] = []
    losses: list[float] = []

    def build(b, **kw):
        if b == "adventurer":
            kw["impl"] = "chunked"
        built.append(real_build(b, **kw))
        return built[-1]

    real_ce = F.cross_entropy

    def cross_entropy(*args, **kwargs):  # the training loss of each step (evaluation takes argmax only)
        value = real_ce(*args, **kwargs)
        losses.append(float(value.detach()))
        return value

    monkeypatch.setattr(train_mod, "build", build)
    monkeypatch.setattr(F, "cross_entropy", cross_entropy)
    r = train_mod.train_eval(backbone, 4, 3, image_size=8, epochs=2, batch_size=128, dim=16, depth=2)
    old = OLD[backbone]
    assert losses == old["losses"]
    assert r["final_loss"] == old["losses"][-1]
    assert r["accuracy"] == old["accuracy"]
    assert _digest(built[0]) == old["weights"]
