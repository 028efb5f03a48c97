"""The reproducer's studies on another device (the lazy stand-in) measure what the CPU run measures."""

from __future__ import annotations

import copy

import pytest

from methods.rf_solver.edit import DiTVelocity
from methods.rf_solver.experiment import edit_tradeoff, injection_reconstruction_check, reconstruction_study
from tests.devices import lazy_safe_views, stand_in_device


def test_studies_on_a_stand_in_accelerator_match_the_cpu(tiny_model, held_out_digits):
    x, y = held_out_digits.images[:3], held_out_digits.labels[:3]
    on_cpu = DiTVelocity(tiny_model)
    on_dev = DiTVelocity(copy.deepcopy(tiny_model).to(stand_in_device()))
    assert on_dev.device.type == "lazy" and on_cpu.device.type == "cpu"
    with lazy_safe_views():
        rec_dev = reconstruction_study(on_dev, x, y, "digits", step_counts=(2,))
        inj_dev = injection_reconstruction_check(on_dev, x, y, num_steps=3, ks=(0, 3))
        tr_dev = edit_tradeoff(on_dev, x, y, (0, 2), num_steps=3, batch=3)
    rec_cpu = reconstruction_study(on_cpu, x, y, "digits", step_counts=(2,))
    for a, b in zip(rec_dev, rec_cpu, strict=True):
        assert (a.solver, a.nfe) == (b.solver, b.nfe) and a.mse == pytest.approx(b.mse, rel=1e-3, abs=1e-6)
    inj_cpu = injection_reconstruction_check(on_cpu, x, y, num_steps=3, ks=(0, 3))
    assert inj_dev == pytest.approx(inj_cpu, rel=1e-3, abs=1e-6)
    tr_cpu = edit_tradeoff(on_cpu, x, y, (0, 2), num_steps=3, batch=3)
    assert tr_dev.mse_to_source == pytest.approx(tr_cpu.mse_to_source, rel=1e-3, abs=1e-6)
    assert tr_dev.examples[2].device.type == "cpu"  # results come back to the CPU
