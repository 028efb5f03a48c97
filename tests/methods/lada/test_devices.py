"""Every X-TAIL learner runs on the stand-in accelerator (``lazy``) and gives the CPU's accuracy matrix.

The device-leak test in tests/test_devices.py runs ``lada.xtail`` with one method; here every
registered X-TAIL learner (LADA, zero-shot, fine-tune, LwF, RAIL) learns a two-domain stream whose
backbone and frozen features live on the stand-in device: a tensor built on the CPU and mixed with
them fails, as it would on CUDA.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from methods.continual.xtail import run_xtail_sequence
from methods.lada.domains import build_stream, pool_features
from methods.lada.jobs import XTAIL_METHODS
from tests.devices import lazy_safe_views, stand_in_device

OPTIONS = {
    "lada": {"epochs": 2, "lambda1": 2, "lambda2": 2, "batch_size": 8},
    "xtail_zeroshot": {},
    "xtail_finetune": {"epochs": 1, "batch_size": 8},
    "xtail_lwf": {"epochs": 1, "batch_size": 8, "kd_lambda": 1.0},
    "xtail_rail": {"hidden_dim": 32},
}


def _run(method, backbone, pools, device):
    from methods.continual.learner import get_learner

    backbone = copy.deepcopy(backbone).to(device)
    domains = ("shapes", "textures")
    stream = build_stream(
        backbone, seed=0, shots=2, domains=domains, pools=pools, features=pool_features(backbone, pools)
    )
    spec = get_learner(method)
    learner = spec.build(spec.validate_options(OPTIONS[method]), seed=0, stream=stream)
    run = run_xtail_sequence(learner, stream)
    return stream, learner, np.asarray(run.matrices[learner.heads[0]])


@pytest.mark.parametrize("method", XTAIL_METHODS)
def test_learner_runs_on_the_stand_in_and_matches_the_cpu(method, tiny_backbone, small_pools):
    import methods.lada.jobs  # noqa: F401  (registers the learners)

    assert set(OPTIONS) == set(XTAIL_METHODS)
    _, _, on_cpu = _run(method, tiny_backbone, small_pools, "cpu")
    with lazy_safe_views():
        stream, learner, on_lazy = _run(method, tiny_backbone, small_pools, stand_in_device())
    assert stream.device.type == "lazy"
    assert on_lazy.shape == (2, 2) and not np.isnan(on_lazy).any()
    np.testing.assert_allclose(on_lazy, on_cpu, atol=0.05)  # the same computation, another backend
