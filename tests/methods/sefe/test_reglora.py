"""RegLoRA's §7 invariants: key selection, accumulation, the penalty's value/gradients/locality, merging."""

import math

import pytest
import torch

from methods.sefe.checks import check_accumulation_and_penalty, check_key_selection, check_merge
from methods.sefe.reglora import KeyMemory, key_count, key_positions, magnitudes


@pytest.mark.parametrize("m,n,r", [(37, 53, 4), (64, 16, 8), (10, 200, 2)])
def test_key_selection_is_the_top_two_percent(m, n, r):
    g = torch.Generator().manual_seed(m)
    B, A = torch.randn(m, r, generator=g), torch.randn(r, n, generator=g)
    idx = key_positions(B, A)
    assert len(idx) == math.floor(0.02 * m * n) == key_count(m, n)
    flat = (B @ A).abs().flatten()
    sel = torch.zeros_like(flat, dtype=torch.bool)
    sel[idx] = True
    assert flat[sel].min() >= flat[~sel].max()
    assert torch.equal((B @ A).abs()[idx // n, idx % n], flat[idx])
    assert all(ok for _, ok, _ in check_key_selection(m, n, r, seed=1))


def test_accumulation_keeps_duplicates_and_penalty_checks():
    B, A = torch.randn(20, 3), torch.randn(3, 30)
    mem = KeyMemory()
    mem.extend([("l", B, A)])
    mem.extend([("l", B, A)])  # the same adapter twice: every index twice
    assert len(mem) == 2 * key_count(20, 30)
    assert len(torch.unique(mem.positions["l"])) == key_count(20, 30)
    results = check_accumulation_and_penalty()
    assert len(results) == 4
    failed = [(name, detail) for name, ok, detail in results if not ok]
    assert not failed, failed


def test_magnitudes_inside_and_outside_the_stored_positions():
    B, A = torch.randn(8, 2), torch.randn(2, 50)
    mem = KeyMemory()
    mem.extend([("l", B, A)])
    inside, outside = magnitudes([("l", B, A)], mem)
    # the stored positions are the largest entries of this very update
    assert inside > outside > 0
    inside0, outside0 = magnitudes([("l", torch.zeros(8, 2), A)], mem)
    assert inside0 == 0 and outside0 == 0


def test_merge_equals_the_unmerged_lora_forward():
    ((name, ok, detail),) = check_merge()
    assert ok, detail
