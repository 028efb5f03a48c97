"""The GA operators: validity, repair, elitism (non-decreasing best), the toy optimum, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from methods.double_filter.ga import GAConfig, is_valid, max_zeros, random_mask, repair, run_ga

GROUPS = ["vision"] * 8 + ["text"] * 4 + ["fusion"] * 6  # the default model's 18 sub-layers


def test_repair_enforces_group_and_drop_limits():
    rng = np.random.default_rng(0)
    g = np.zeros(len(GROUPS), dtype=int)
    fixed = repair(g, GROUPS, 0.5, rng)
    assert is_valid(fixed, GROUPS, 0.5)
    assert (fixed == 0).sum() == max_zeros(len(GROUPS), 0.5) == 9
    assert not is_valid([0] * 8 + [1] * 10, GROUPS, 0.9)  # vision lost every sub-layer
    assert not is_valid([1] * 17, GROUPS, 0.5)  # wrong length


def _toy(g):
    protected = {0, 8, 12}
    return sum(1 for x in g if x == 0) - 10 * sum(1 for i in protected if g[i] == 0)


def test_ga_finds_the_toy_optimum_with_monotone_best_and_valid_masks():
    res = run_ga(_toy, GROUPS, GAConfig(seed=4))
    assert is_valid(res.best, GROUPS, 0.5)
    assert res.best_fitness == 9 and _toy(res.best) == 9
    assert len(res.best_curve) == 31 and np.all(np.diff(res.best_curve) >= 0)
    assert res.best_curve[0] < 9  # the optimum was found by the search, not by the initial population
    assert all(is_valid(g, GROUPS, 0.5) for g in res.cache)


def test_ga_same_seed_same_result_different_seed_differs():
    a = run_ga(_toy, GROUPS, GAConfig(seed=1, generations=5))
    b = run_ga(_toy, GROUPS, GAConfig(seed=1, generations=5))
    c = run_ga(_toy, GROUPS, GAConfig(seed=2, generations=5))
    assert a.best == b.best and a.best_curve == b.best_curve and a.mean_curve == b.mean_curve
    assert a.mean_curve != c.mean_curve


def test_elitism_keeps_the_best_in_the_population():
    calls = []

    def fit(g):
        calls.append(g)
        return float(sum(g[:3]) - sum(g[3:]))

    res = run_ga(fit, GROUPS, GAConfig(seed=0, generations=4, population=6))
    assert len(calls) == len(set(calls)) == res.evaluations  # the cache scores each genome once
    assert res.best_fitness == max(res.cache.values())


def test_random_mask_has_the_requested_zeros():
    g = random_mask(GROUPS, 6, seed=3)
    assert len(g) == 18 and g.count(0) == 6 and is_valid(g, GROUPS, 0.5)
    with pytest.raises(ValueError):
        run_ga(_toy, GROUPS, GAConfig(population=2, elite=2))
