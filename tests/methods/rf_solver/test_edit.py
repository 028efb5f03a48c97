"""Spec §7.6 and §7.8 on the tiny trained model: reconstruction orders, same-prompt injection, trade-off."""

import pytest
import torch

from methods.rf_solver.edit import edit_sweep, reconstruct_image, rf_edit
from methods.rf_solver.metrics import mse


@pytest.mark.parametrize("n", [5, 10, 25])
def test_rf_solver2_reconstructs_better_than_euler_at_equal_nfe(tiny_velocity, held_out_digits, n):
    x, y = held_out_digits.images[:8], held_out_digits.labels[:8]
    rf2, _, nfe2 = reconstruct_image(tiny_velocity, x, y, n, order=2)
    eul, _, nfe1 = reconstruct_image(tiny_velocity, x, y, 2 * n, order=1)
    assert nfe1 == nfe2 == 4 * n
    assert float(mse(rf2, x).mean()) < float(mse(eul, x).mean())


def test_same_prompt_early_injection_does_not_hurt_reconstruction(tiny_velocity, held_out_digits):
    """Spec §7.6 for small k. (Full injection k = N is *not* as good here: V is keyed by the interval's
    upper time, so V computed one interval lower is injected; docs/results/rf_solver.md measures it.)"""
    x, y = held_out_digits.images[:16], held_out_digits.labels[:16]
    errs = {
        k: float(mse(rf_edit(tiny_velocity, x, y, y, num_steps=6, inject_k=k, guidance=1.0).edited, x).mean())
        for k in (0, 1, 2)
    }
    assert errs[1] <= errs[0] * 1.01 and errs[2] <= errs[0] * 1.01


def test_edit_sweep_equals_single_edits(tiny_velocity, held_out_digits):
    x, y = held_out_digits.images[:4], held_out_digits.labels[:4]
    sweep = edit_sweep(tiny_velocity, x, y, (y + 1) % 10, ks=(1, 3), num_steps=5, guidance=2.0)
    for k in (1, 3):
        single = rf_edit(tiny_velocity, x, y, (y + 1) % 10, num_steps=5, inject_k=k, guidance=2.0)
        assert torch.allclose(sweep[k], single.edited, atol=1e-5)


def test_label_names_and_validation(tiny_velocity):
    y = tiny_velocity.labels(["3", 4], 2)
    assert y.tolist() == [3, 4]
    with pytest.raises(ValueError):
        tiny_velocity.labels([1, 2, 3], 2)
    with pytest.raises(ValueError):
        rf_edit(tiny_velocity, torch.zeros(1, 1, 16, 16), 1, 2, num_steps=3, inject_k=4)
