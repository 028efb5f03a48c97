"""Stand-ins for the device tests (tests/test_devices.py): a tiny random llama as the base model.

The jobs' real base is the clean llama (300 training steps, cached) or SmolLM2; :func:`tiny_base`
replaces it for one test with the 2-layer llama of ``conftest.make_tiny_llama`` and keeps the
checkpoints in ``tmp_path``. :func:`tiny_base_with_checkpoint` also quantizes it once on the CPU, so
``any4.evaluate`` has :data:`EVAL_CHECKPOINT` to score.
"""

from __future__ import annotations

TINY_QUANTIZE = {"fmt": "any4", "group_size": 32, "calibration": "offline", "eval_windows": 2, "seqlen": 48}


def _checkpoint_id() -> str:
    from methods.any4.experiment import checkpoint_id
    from methods.any4.jobs import QuantizeParams

    return checkpoint_id(QuantizeParams(**TINY_QUANTIZE))


EVAL_CHECKPOINT = _checkpoint_id()


def tiny_base(monkeypatch, tmp_path) -> None:
    """``load_base`` returns a tiny random llama (a fresh copy per call); checkpoints go to ``tmp_path``."""
    from methods.any4 import experiment, jobs
    from methods.any4.sources import BaseModel
    from tests.methods.any4.conftest import make_tiny_llama

    def fake_load_base(name, **_):
        model = make_tiny_llama(hidden=64)
        return BaseModel("clean-llama", model, lambda text: [ord(c) % 96 for c in text], ["tiny test model"], {})

    monkeypatch.setattr(experiment, "load_base", fake_load_base)
    monkeypatch.setattr(jobs, "checkpoint_root", lambda: tmp_path / "ckpts")


def tiny_base_with_checkpoint(monkeypatch, tmp_path) -> None:
    """:func:`tiny_base` and :data:`EVAL_CHECKPOINT`, quantized on the CPU."""
    from core.jobs import get_method
    from core.jobs.context import null_context

    tiny_base(monkeypatch, tmp_path)
    spec = get_method("any4.quantize")
    report = spec.run(spec.validate(TINY_QUANTIZE), null_context())
    assert report.data["checkpoint"] == EVAL_CHECKPOINT
