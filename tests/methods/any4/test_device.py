"""The reproducer's suite on another device (the lazy stand-in) measures what the CPU run measures."""

from __future__ import annotations

import copy

import pytest
import torch

from core.jobs import null_context
from methods.any4.experiment import ReproduceOptions, run_suite
from tests.devices import lazy_safe_views, stand_in_device


def test_suite_on_a_stand_in_accelerator_matches_the_cpu(tiny_llama, calib_ids):
    windows = {"text": torch.randint(0, 96, (2, 24), generator=torch.Generator().manual_seed(1))}
    opts = ReproduceOptions(group_sizes=(32,), variants=("int4", "any4:offline"))
    on_cpu = run_suite("tiny", tiny_llama, windows, calib_ids, opts, null_context())
    model = copy.deepcopy(tiny_llama).to(stand_in_device())
    with lazy_safe_views():
        on_dev = run_suite("tiny", model, windows, calib_ids, opts, null_context())
    assert on_dev.fp_ppl["text"] == pytest.approx(on_cpu.fp_ppl["text"], rel=1e-4)
    for a, b in zip(on_dev.rows, on_cpu.rows, strict=True):
        assert a["variant"] == b["variant"]
        assert a["ppl"]["text"] == pytest.approx(b["ppl"]["text"], rel=1e-4)
        assert a["weight_mse"] == pytest.approx(b["weight_mse"], rel=1e-6)  # quantized on the CPU either way
        assert a["output_mse"] == pytest.approx(b["output_mse"], rel=1e-3)
