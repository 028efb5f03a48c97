"""Algorithm 1 on hand-made pools with known scores (spec §3.4, §7)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from methods.lms3.scores import cosine_distance, lms3_select, rejection_lambda, similarity, smallest_k


def test_lambda_arithmetic(caplog):
    assert rejection_lambda(7473, 0.01) == 74
    assert rejection_lambda(1537, 0.01) == 15
    assert rejection_lambda(1744, 0.01) == 17 and rejection_lambda(746, 0.01) == 7
    with caplog.at_level(logging.WARNING):
        assert rejection_lambda(99, 0.01) == 0
        assert rejection_lambda(99, 0.01) == 0
    assert caplog.text.count("every query will be rejected") == 1  # warned once per (|D|, l)
    assert rejection_lambda(99, 0.01, min_lambda=1) == 1
    assert rejection_lambda(5, 1.0, min_lambda=9) == 5


def _pool():
    """Query at the origin; p rows on a line so Sim = |p|; Stab chosen to reorder by Score.

    item: 0    1    2    3    4
    Sim : 1    2    3    4    5
    Stab: 5    1    0.5  4    0.1
    Score 5    2    1.5  16   0.5   -> Score order 4, 2, 1, 0, 3 ; Sim order 0, 1, 2, 3, 4
    """
    p = np.zeros((5, 3), dtype=np.float32)
    p[:, 0] = [1, 2, 3, 4, 5]
    stab = np.array([5, 1, 0.5, 4, 0.1], dtype=np.float32)
    return np.zeros(3, dtype=np.float32), p, stab


def test_scores_and_selection_order():
    xq, p, stab = _pool()
    c = lms3_select(xq, p, stab, k=3, l=1.0)
    np.testing.assert_allclose(c.sim, [1, 2, 3, 4, 5])
    np.testing.assert_allclose(c.score, [5, 2, 1.5, 16, 0.5])
    assert c.score_top.tolist() == [4, 2, 1]
    assert c.chosen.tolist() == [4, 2, 1] and not c.rejected  # l = 1: nothing rejected


def test_rejection_keeps_order_and_drops_outside_sim_top_lambda():
    xq, p, stab = _pool()
    c = lms3_select(xq, p, stab, k=3, l=0.6)  # λ = int(3.0) = 3 -> Sim top-3 = {0, 1, 2}
    assert c.lam == 3
    assert c.chosen.tolist() == [2, 1]  # 4 is rejected, order of Score kept
    c = lms3_select(xq, p, stab, k=1, l=0.6)
    assert c.chosen.tolist() == [] and c.rejected  # best Score (4) is outside Sim top-3


def test_lambda_zero_rejects_everything_and_min_lambda_rescues():
    xq, p, stab = _pool()
    c = lms3_select(xq, p, stab, k=5, l=0.01)  # int(0.05) = 0
    assert c.lam == 0 and c.rejected and c.score_top.size == 5
    c = lms3_select(xq, p, stab, k=5, l=0.01, min_lambda=1)
    assert c.chosen.tolist() == [0]


def test_no_reject_equals_score_topk():
    xq, p, stab = _pool()
    assert lms3_select(xq, p, stab, k=2, l=0.0, reject=False).chosen.tolist() == [4, 2]


def test_ties_broken_by_pool_index():
    assert smallest_k(np.array([3.0, 1.0, 1.0, 0.5, 1.0]), 3).tolist() == [3, 1, 2]
    xq = np.zeros(2, dtype=np.float32)
    p = np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32)
    c = lms3_select(xq, p, np.ones(3, dtype=np.float32), k=3, l=1.0)
    assert c.chosen.tolist() == [0, 1, 2]


def test_rankings_invariant_to_rescaling():
    rng = np.random.default_rng(0)
    xq, p = rng.normal(size=8).astype(np.float32), rng.normal(size=(40, 8)).astype(np.float32)
    stab = rng.uniform(0.1, 2, size=40).astype(np.float32)
    base = lms3_select(xq, p, stab, k=5, l=0.2)
    scaled_v = lms3_select(xq, p, 3.7 * stab, k=5, l=0.2)  # W_V -> 3.7 W_V
    scaled_qk = lms3_select(2.5 * xq, 2.5 * p, stab, k=5, l=0.2)  # P and x_q jointly
    for other in (scaled_v, scaled_qk):
        assert other.score_top.tolist() == base.score_top.tolist()
        assert other.chosen.tolist() == base.chosen.tolist()


def test_fp32_no_overflow_where_fp16_would():
    """The reference's fp16 numpy path overflows on large vectors; ours stays finite."""
    xq = np.full(4096, 30.0, dtype=np.float32)
    p = np.full((3, 4096), -30.0, dtype=np.float32)
    with np.errstate(over="ignore"):
        diff16 = p.astype(np.float16) - xq.astype(np.float16)
        assert not np.isfinite(np.sqrt((diff16 * diff16).sum(axis=1, dtype=np.float16))).all()
    sim = similarity(xq, p)
    assert sim.dtype == np.float32 and np.isfinite(sim).all()
    np.testing.assert_allclose(sim, 60.0 * 64.0, rtol=1e-5)


def test_cosine_distance():
    d = cosine_distance(np.array([1.0, 0.0]), np.array([[2.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]))
    np.testing.assert_allclose(d, [0.0, 1.0, 2.0], atol=1e-6)


@pytest.mark.parametrize("bad", [{"k": 0}, {"l": 1.5}, {"min_lambda": -1}])
def test_selection_config_validates(bad):
    from methods.lms3.config import SelectionConfig

    with pytest.raises(ValueError):
        SelectionConfig(**bad)


def test_result_cache_persists_and_survives_a_torn_line(tmp_path):
    from methods.lms3.cache import ResultCache

    path = tmp_path / "c.jsonl"
    c = ResultCache(path)
    assert len(c) == 0
    k = ResultCache.key("nll", "hash", "prompt", "gold")
    c.put(k, 1.25)
    with path.open("a") as fh:
        fh.write('{"k": "torn')  # a crash mid-write
    again = ResultCache(path)
    assert again.get(k) == 1.25 and len(again) == 1
    assert ResultCache.key("a", "bc") != ResultCache.key("ab", "c")


def test_normalised_sim_removes_the_pool_norm_effect():
    """Reference Sim picks the smallest ‖P·x‖ whatever the query; unit-normalised Sim follows the direction."""
    from methods.lms3.scores import normalized_inputs

    # pool: two directions, the "wrong" one with a much smaller norm; ‖P·x‖ ≫ ‖x_q‖
    p = np.array([[10.0, 0.0], [0.0, 30.0], [0.0, 40.0]], dtype=np.float32)
    stab = np.ones(3, dtype=np.float32)
    for xq, want_unit in ((np.array([0.0, 1.0], np.float32), 1), (np.array([1.0, 0.0], np.float32), 0)):
        assert lms3_select(xq, p, stab, k=1, l=1.0).score_top.tolist() == [0]  # norm decides
        got = lms3_select(xq, p, stab, k=1, l=1.0, normalize="unit").score_top.tolist()
        assert got == [want_unit]  # ties (items 1, 2 both unit (0, 1)) break by index
    xn, pn = normalized_inputs(np.array([3.0, 4.0]), p, "unit")
    np.testing.assert_allclose(np.linalg.norm(xn), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(pn, axis=1), 1.0, rtol=1e-6)
    xc, pc = normalized_inputs(np.array([3.0, 4.0]), p, "centred")
    np.testing.assert_allclose(pc.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(xc, [3.0, 4.0])
    c = lms3_select(np.zeros(2, np.float32), p, stab, k=1, l=1.0, normalize="centred")
    np.testing.assert_allclose(c.sim, np.linalg.norm(p - p.mean(axis=0), axis=1), rtol=1e-5)
    with pytest.raises(ValueError, match="normalisation"):
        normalized_inputs(np.zeros(2), p, "whiten")  # type: ignore[arg-type]


def test_selector_passes_the_normalisation():
    from methods.lms3.selectors import Selector

    with pytest.raises(ValueError, match="normalisation"):
        Selector("lms3", normalize="bogus")  # type: ignore[arg-type]
