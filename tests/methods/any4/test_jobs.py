"""The any4 jobs through the registry, on a tiny random llama standing in for the base model."""

import pytest
import torch

from core.jobs import InvalidParams, get_method, get_reproducer, null_context


@pytest.fixture
def tiny_base(monkeypatch, tmp_path, tiny_llama_factory):
    from methods.any4 import experiment, jobs
    from methods.any4.sources import BaseModel

    model = tiny_llama_factory(hidden=64)

    def fake_load_base(name, **_):
        return BaseModel("clean-llama", model, lambda text: [ord(c) % 96 for c in text], ["tiny test model"], {})

    monkeypatch.setattr(experiment, "load_base", fake_load_base)
    monkeypatch.setattr(jobs, "checkpoint_root", lambda: tmp_path / "ckpts")
    return model


def test_registered_with_queues_and_reproducer():
    spec = get_method("any4.quantize")
    assert spec.queue == "cpu"
    assert get_method("any4.evaluate").queue == "cpu"
    assert get_reproducer("any4").name == "any4"
    with pytest.raises(InvalidParams):
        spec.validate({"fmt": "any5"})
    with pytest.raises(InvalidParams):
        spec.validate({"eval_windows": 1000})
    with pytest.raises(InvalidParams):
        get_method("any4.evaluate").validate({"checkpoint": "../../etc/passwd"})


@pytest.mark.parametrize("cuda", [True, False])
def test_queue_is_the_same_on_every_host(monkeypatch, cuda):
    """The registration must not probe the host: an API without CUDA and a GPU worker list the same queues."""
    import importlib

    from core.jobs.registry import registry_snapshot
    from methods.any4 import jobs

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    with registry_snapshot():
        importlib.reload(jobs)
        assert get_method("any4.quantize").queue == "cpu"
        assert get_method("any4.evaluate").queue == "cpu"


def test_quantize_then_evaluate(tiny_base, data_dir):
    q = get_method("any4.quantize")
    params = q.validate(
        {
            "model": "clean-llama",
            "fmt": "any4",
            "group_size": 32,
            "calibration": "offline",
            "eval_windows": 2,
            "seqlen": 48,
        }
    )
    rep = q.run(params, null_context())
    assert rep.metrics["ppl_quantized"] > 1 and rep.metrics["ppl_fp"] > 1
    assert rep.metrics["bits_per_weight"] == pytest.approx(4 + 32 / 32 + 16 * 16 / 64, rel=0.2)
    luts = rep.data["row_luts"]
    assert len(luts) == 16 and len(luts[0]["learned"]) == 16 and len(luts[0]["nf4"]) == 16
    assert min(luts[0]["weights"]) <= min(luts[0]["learned"]) + 1e-6  # levels live inside the group's range
    assert rep.artifact("lut_row0.png") is not None
    ckpt = rep.data["checkpoint"]

    ev = get_method("any4.evaluate")
    rep2 = ev.run(ev.validate({"checkpoint": ckpt, "eval_windows": 2, "seqlen": 48}), null_context())
    assert rep2.metrics["ppl_quantized"] == pytest.approx(rep.metrics["ppl_quantized"], rel=1e-5)
    assert rep2.metrics["ppl_fp"] == pytest.approx(rep.metrics["ppl_fp"], rel=1e-5)
    with pytest.raises(ValueError, match="unknown checkpoint"):
        ev.run(ev.validate({"checkpoint": "nope"}), null_context())


def test_group_size_must_divide_k(tiny_base, data_dir):
    q = get_method("any4.quantize")
    with pytest.raises(ValueError, match="does not divide"):
        q.run(
            q.validate({"fmt": "int4", "group_size": 128, "eval_windows": 1, "seqlen": 32, "calibration": "none"}),
            null_context(),
        )
