"""Cached long-short alignment runs are keyed without the device (a CPU result serves a GPU run and back)."""

from methods.long_short_alignment.experiment import _cache_params
from methods.long_short_alignment.jobs import LMParams, SyntheticParams


def test_cache_keys_leave_out_the_device_and_keep_bf16_apart():
    cpu = _cache_params(SyntheticParams(task="mean", steps=10).model_dump())
    assert cpu == _cache_params(SyntheticParams(task="mean", steps=10, device="cuda").model_dump())
    assert cpu == _cache_params(SyntheticParams(task="mean", steps=10, device="auto").model_dump())
    # the keys of runs cached before devices existed: the params without device and amp
    assert cpu == SyntheticParams(task="mean", steps=10).model_dump(exclude={"device", "amp"})
    bf16 = _cache_params(SyntheticParams(task="mean", steps=10, amp="bf16").model_dump())
    assert bf16 != cpu and bf16["amp"] == "bf16"
    assert "device" not in _cache_params(LMParams(device="cuda").model_dump())
