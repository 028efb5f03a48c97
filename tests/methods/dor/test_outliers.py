"""Outlier pool and dynamic sampling (spec dor.md §7.3, §7.4)."""

import hashlib

import numpy as np
import pytest
import torch

from methods.dor.config import TaskConfig, TuneConfig
from methods.dor.outliers import OutlierSampler, candidates, select_pool
from methods.dor.tune import make_task, tune
from methods.vlm.render import LEXICON

BASE = ["tomato", "brick", "tent", "starfish", "bagel"]
VOCAB = [*LEXICON, "Tomato", "BRICK", "golf_ball", "red", "circle", "stripe"]


def _hash(t: torch.Tensor) -> str:
    return hashlib.sha256(t.numpy().tobytes()).hexdigest()


def test_candidates_drop_base_names_in_any_case(tiny):
    c = candidates(VOCAB, ["Tomato", "brick", "golf_ball"], tiny)
    assert "tomato" not in c and "brick" not in c and "golf ball" not in c
    assert "lime" in c and len(c) == len(set(c))


def test_near_far_random_and_oracle_pools(tiny):
    near = select_pool(tiny, VOCAB, BASE, k=10, kind="near")
    far = select_pool(tiny, VOCAB, BASE, k=10, kind="far")
    rand = select_pool(tiny, VOCAB, BASE, k=10, kind="random", seed=0)
    assert not set(near.words) & {b.lower() for b in BASE}
    assert len(near.words) == len(far.words) == len(rand.words) == 10
    assert np.all(np.diff(near.scores) <= 0) and near.scores.min() >= far.scores.max()
    oracle = select_pool(tiny, VOCAB, BASE, kind="oracle", new_names=["lime", "box"])
    assert oracle.words == ["lime", "box"]
    with pytest.raises(ValueError):
        select_pool(tiny, VOCAB, BASE, k=10_000)


def test_sampler_draws_fresh_subsets_of_size_b_from_the_pool():
    s = OutlierSampler(50, 8, seed=0)
    a, b = s(0), s(1)
    assert len(a) == len(b) == 8 and len(set(a.tolist())) == 8
    assert set(a.tolist()) != set(b.tolist())
    assert all(0 <= i < 50 for i in a.tolist() + b.tolist())
    again = OutlierSampler(50, 8, seed=0)
    assert torch.equal(again(0), a)
    per_epoch = OutlierSampler(50, 8, seed=0, resample="epoch", steps_per_epoch=3)
    assert torch.equal(per_epoch(0), per_epoch(2)) and not torch.equal(per_epoch(2), per_epoch(3))


def test_tuning_with_dor_keeps_the_frozen_outlier_features(tiny):
    task = make_task(tiny, TaskConfig(dataset="digits", n_base=5, shots=2), seed=0, views=1)
    pool = select_pool(tiny, VOCAB, task.base_names, k=12, kind="near")
    before = _hash(pool.features)
    cfg = TuneConfig(host="coop", dor=True, epochs=2, batch_size=8, outlier_batch=4, n_ctx=4)
    result = tune(tiny, task, cfg, pool, seed=0)
    assert _hash(pool.features) == before
    assert len(result.sampled) == 3 and all(len(s) == 4 for s in result.sampled)
    assert result.sampled[0] != result.sampled[1]
    assert set(result.parts) == {"ce", "dor"} and len(result.losses) == 2 * 2
