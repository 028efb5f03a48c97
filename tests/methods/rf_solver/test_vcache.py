"""Spec §7.7: V-injection wiring (cache size, which steps inject, keys, Q/K untouched, memory freed)."""

import pytest
import torch

from methods.rf_solver.config import DiTConfig
from methods.rf_solver.edit import DiTVelocity, rf_edit
from methods.rf_solver.model import RFDiT
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.solver import invert, sample
from methods.rf_solver.vcache import VCache, VSharing, inject_mask

CFG = DiTConfig(width=32, heads=2, depth=4, single_from=2, cond_dim=8)


@pytest.fixture(scope="module")
def untrained():
    torch.manual_seed(0)
    model = RFDiT(CFG)
    # adaLN-zero starts with zero gates: give the blocks non-zero modulation so V matters.
    with torch.no_grad():
        for p in model.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.05)
    return DiTVelocity(model.eval())


def _images(n=3):
    return torch.rand(n, 1, 16, 16, generator=torch.Generator().manual_seed(1)) * 2 - 1


def test_inject_mask():
    assert inject_mask(5, 2) == [True, True, False, False, False]
    assert inject_mask(3, 0) == [False] * 3
    assert inject_mask(3, 9) == [True] * 3


@pytest.mark.parametrize("order,k,n", [(2, 2, 6), (2, 0, 4), (2, 5, 5), (1, 3, 7)])
def test_cache_size_and_injected_steps(untrained, order, k, n):
    late = untrained.late_blocks
    assert late == (2, 3)
    res = rf_edit(untrained, _images(), [1, 2, 3], [4, 5, 6], num_steps=n, inject_k=k, order=order, guidance=2.0)
    assert res.cached_tensors == order * k * len(late)
    injected_steps = sorted({e[1] for e in res.injected})
    assert injected_steps == list(range(k))  # step j injects iff j < k
    assert sorted({e[1] for e in res.recorded}) == list(range(k))  # mirrored inversion steps
    assert {e[3] for e in res.injected} <= set(late) and len(res.injected) == order * k * len(late)
    assert res.nfe == 2 * order * n


def test_denoise_keys_subset_of_inversion_keys(untrained):
    ts = get_schedule(6, untrained.seq_len)
    x = _images(2)
    with VCache(untrained.late_blocks) as cache:
        rec = VSharing(cache, 3, "record")
        z1 = invert(untrained.velocity(1, 1.0, rec), x, ts, 2, hooks=[rec]).z
        stored = set(cache.keys())

        class Spy(VSharing):
            asked: list = []

            def on_qkv(self, block_id, q, k, v):
                if self._key_time is not None and block_id in self.cache.blocks:
                    self.asked.append((*self._key_time, block_id))
                return super().on_qkv(block_id, q, k, v)

        inj = Spy(cache, 3, "inject")
        sample(untrained.velocity(2, 1.0, inj), z1, ts, 2, hooks=[inj])
    assert inj.asked and set(inj.asked) <= stored
    # keys are the interval's upper time: denoising step j's t_j, for main and midpoint evaluations
    assert {k[0] for k in stored} == {ts[0], ts[1], ts[2]}
    assert {k[1] for k in stored} == {False, True}


def test_only_v_is_replaced_q_k_untouched(untrained):
    """Wrap the tap to see q/k/v before and after: q and k come back as the same objects."""
    ts = get_schedule(4, untrained.seq_len)
    x = _images(2)
    seen = []

    class Probe:
        def __init__(self, inner):
            self.inner = inner

        def before_eval(self, info):
            self.inner.before_eval(info)

        def on_qkv(self, block_id, q, k, v):
            q2, k2, v2 = self.inner.on_qkv(block_id, q, k, v)
            seen.append((block_id, q2 is q, k2 is k, torch.equal(v2, v)))
            return q2, k2, v2

    with VCache(untrained.late_blocks) as cache:
        rec = VSharing(cache, 4, "record")
        z1 = invert(untrained.velocity(1, 1.0, rec), x, ts, 2, hooks=[rec]).z
        probe = Probe(VSharing(cache, 4, "inject"))
        sample(untrained.velocity(7, 1.0, probe), z1, ts, 2, hooks=[probe])
    assert all(q_same and k_same for _, q_same, k_same, _ in seen)
    late_v_same = [v_same for b, _, _, v_same in seen if b in untrained.late_blocks]
    early_v_same = [v_same for b, _, _, v_same in seen if b not in untrained.late_blocks]
    assert all(early_v_same)  # early blocks never touched
    assert not all(late_v_same)  # late blocks got the source V


def test_q_k_of_first_late_block_unchanged_by_injection(untrained):
    """With the same input, the first late block computes the same q and k with or without injection."""
    x = _images(2)
    ts = get_schedule(3, untrained.seq_len)

    def capture(tap_inner):
        got = {}

        class Cap:
            def before_eval(self, info):
                if tap_inner:
                    tap_inner.before_eval(info)

            def on_qkv(self, block_id, q, k, v):
                if tap_inner:
                    q, k, v = tap_inner.on_qkv(block_id, q, k, v)
                got.setdefault(block_id, (q.clone(), k.clone(), v.clone()))
                return q, k, v

        return got, Cap()

    with VCache(untrained.late_blocks) as cache:
        rec = VSharing(cache, 3, "record")
        z1 = invert(untrained.velocity(1, 1.0, rec), x, ts, 2, hooks=[rec]).z
        got_inj, cap_inj = capture(VSharing(cache, 3, "inject"))
        sample(untrained.velocity(5, 1.0, cap_inj), z1, ts, 2, hooks=[cap_inj])
    got_plain, cap_plain = capture(None)
    sample(untrained.velocity(5, 1.0, cap_plain), z1, ts, 2, hooks=[cap_plain])
    b = untrained.late_blocks[0]
    assert torch.equal(got_inj[b][0], got_plain[b][0]) and torch.equal(got_inj[b][1], got_plain[b][1])
    assert not torch.equal(got_inj[b][2], got_plain[b][2])


def test_cache_freed_and_disk_offload(untrained, tmp_path):
    res = rf_edit(untrained, _images(1), 1, 2, num_steps=4, inject_k=2, offload_dir=tmp_path)
    assert res.cached_tensors == 8 and res.cache_bytes > 0
    assert list(tmp_path.iterdir()) == []  # offload files removed after the edit
    mem = rf_edit(untrained, _images(1), 1, 2, num_steps=4, inject_k=2)
    assert torch.allclose(mem.edited, res.edited, atol=1e-6)  # disk and memory give the same edit


def test_cache_api():
    c = VCache([3])
    c.put((1.0, False, 3), torch.ones(2))
    with pytest.raises(KeyError):
        c.put((1.0, False, 3), torch.ones(2))
    with pytest.raises(KeyError):
        c.get((0.5, False, 3))
    assert len(c) == 1 and c.nbytes == 8
    c.clear()
    assert len(c) == 0 and c.nbytes == 0 and c.peak_nbytes == 8


def test_order3_refuses_v_sharing(untrained):
    with pytest.raises(ValueError):
        rf_edit(untrained, _images(1), 1, 2, num_steps=2, inject_k=1, order=3)
