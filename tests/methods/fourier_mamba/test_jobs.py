"""The registered jobs and the reproducer, run inline with the test-sized ``tiny`` preset."""

import re

import numpy as np
import pytest

from core.evidence import Evidence, table_in
from core.jobs import get_method, get_reproducer, null_context


@pytest.fixture(scope="module")
def tiny_model():
    """Train and cache the ``tiny`` zigzag model once (≈ a second)."""
    from methods.fourier_mamba.experiment import checkpoint_path, train_and_save

    train_and_save("tiny", "zigzag", null_context())
    return checkpoint_path("tiny", "zigzag")


def test_train_job_caches_a_model(tiny_model):
    from methods.fourier_mamba.experiment import load_model

    model, blob = load_model(tiny_model)
    assert blob["train"]["steps"] == 8 and len(blob["losses"]) == 8
    assert model.cfg.scan_order == "zigzag" and model.cfg.channels == 8


def _upload(size=(72, 56)) -> str:
    import io

    import numpy as np
    from PIL import Image

    from core.artifacts import get_artifact_store

    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (*size[::-1], 3), dtype=np.uint8)).save(buf, "PNG")
    return get_artifact_store().put_bytes(buf.getvalue(), name="x.png").sha256


def test_derain_upload_with_added_rain_scores_against_the_clean_image(tiny_model):
    spec = get_method("fourier_mamba.derain")
    params = spec.validate({"image_sha256": _upload(), "add_rain": "L", "rain_seed": 3, "preset": "tiny"})
    report = spec.run(params, null_context())
    m = report.metrics
    assert {"psnr_y_input", "ssim_y_input", "psnr_y_output", "ssim_y_output"} <= set(m)
    assert 5 < m["psnr_y_input"] < 40 and -1 <= m["ssim_y_output"] <= 1
    assert {a.name for a in report.artifacts} == {"input.png", "output.png", "ground_truth.png"}
    assert report.data["height"] == 56 and report.data["width"] == 72
    assert m["device"] == "cpu" and m["dtype"] == "float32" and "gpu" not in m


def test_train_job_records_where_it_trained(monkeypatch, tmp_path):
    from methods.fourier_mamba import experiment

    monkeypatch.setattr(experiment, "checkpoint_path", lambda preset, order: tmp_path / f"{preset}-{order}.pt")
    spec = get_method("fourier_mamba.train")
    report = spec.run(spec.validate({"preset": "tiny", "steps": 2}), null_context())
    assert report.metrics["device"] == "cpu" and report.metrics["steps"] == 2
    _, blob = experiment.load_model(tmp_path / "tiny-zigzag.pt")
    assert blob["train"]["device"] == "cpu" and blob["train"]["amp"] == "off"


def test_cuda_without_cuda_fails_before_training(monkeypatch, tmp_path):
    import torch

    from core.device import DeviceUnavailable
    from methods.fourier_mamba import experiment

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(experiment, "train_model", lambda *a, **k: pytest.fail("trained"))
    spec = get_method("fourier_mamba.train")
    with pytest.raises(DeviceUnavailable):
        spec.run(spec.validate({"preset": "tiny", "steps": 2, "device": "cuda"}), null_context())


def test_derain_without_ground_truth_and_large_uploads_downscaled(tiny_model):
    from methods.fourier_mamba.experiment import MAX_SIDE

    report = get_method("fourier_mamba.derain").run(
        get_method("fourier_mamba.derain").validate({"image_sha256": _upload((MAX_SIDE + 100, 40)), "preset": "tiny"}),
        null_context(),
    )
    assert "psnr_y_output" not in report.metrics and "No ground truth" in report.summary
    assert report.data["width"] == MAX_SIDE


def test_derain_params_need_exactly_one_image():
    from core.jobs import InvalidParams

    spec = get_method("fourier_mamba.derain")
    with pytest.raises(InvalidParams, match="exactly one"):
        spec.validate({})
    with pytest.raises(InvalidParams):
        spec.validate({"sample": "china", "image_sha256": "0" * 64})
    with pytest.raises(InvalidParams):
        spec.validate({"sample": "mars"})


def test_reproducer_tiny_writes_results(tmp_path, data_dir):
    rep = get_reproducer("fourier_mamba")
    path = rep.run(tmp_path, null_context(), {"preset": "tiny", "ablation": True, "seeds": 2})
    text = path.read_text()
    assert "Held-out synthetic crops" in text and "Real Rain100L pairs" in text and "## Reading" in text
    assert "zigzag" in text and "raster" in text
    files = {p.name for p in (tmp_path / "fourier_mamba").iterdir()}
    assert {"heldout_examples.png", "rain100l_example.png", "loss.png", "results.json"} <= files
    ev = Evidence.load(tmp_path / "fourier_mamba" / "results.json")
    assert ev.recompute() == [] and table_in(text) == ev.table()
    assert len(ev.headlines) == 4 and ev.raw["seeds"] == [0, 1]
    n_crops = len(ev.raw["crops"]["psnr_in"])
    for order in ("zigzag", "raster"):
        runs = ev.raw[order]["runs"]
        assert [r["seed"] for r in runs] == [0, 1] and all(len(r["crop_psnr_out"]) == n_crops for r in runs)
        # the per-seed gain is the seed's per-crop output minus the (shared) input, averaged over crops
        gain = np.mean(np.asarray(runs[1]["crop_psnr_out"]) - np.asarray(ev.raw["crops"]["psnr_in"]))
        assert ev.raw[order]["gain"][1] == pytest.approx(gain)
    assert ev.raw["zigzag"]["runs"][0]["crop_psnr_out"] != ev.raw["zigzag"]["runs"][1]["crop_psnr_out"]
    # a second run re-scores the cached models (no training) and gives the same raw values
    again = rep.run(tmp_path / "again", null_context(), {"preset": "tiny", "ablation": True, "seeds": 2})
    ev2 = Evidence.load(tmp_path / "again" / "fourier_mamba" / "results.json")
    assert all(r["cached"] for r in ev2.raw["zigzag"]["runs"]) and again.exists()
    assert ev2.raw["zigzag"]["gain"] == ev.raw["zigzag"]["gain"]


def test_headlines_read_the_claims_against_their_nulls():
    from methods.fourier_mamba.report import evidence

    crops = {"psnr_in": [20.0] * 4, "median_psnr_out": [20.2] * 4, "zigzag_psnr_out": [24.0, 23.0, 25.0, 24.5]}
    raw = {
        "seeds": [0, 1, 2],
        "crops": crops,
        "zigzag": {"gain": [4.1, 3.9, 4.3], "psnr_out": [24.1, 23.9, 24.3]},
        "raster": {"gain": [4.6, 4.4, 4.9], "psnr_out": [24.6, 24.4, 24.9]},
        "rain100l": {"psnr_in": [17.5, 22.5, 25.5], "zigzag_psnr_out": [22.4, 18.2, 26.6]},
    }
    verdicts = [h.result["verdict"] for h in evidence(raw).headlines]
    # gain above 3 dB: holds; beats the median: holds; real pairs straddle 0: not resolved; raster ahead: fails
    assert verdicts == ["holds", "holds", "not resolved", "fails"]
    raw["zigzag"]["gain"] = [2.6, 2.4, 2.5]
    assert evidence(raw).headlines[0].result["verdict"] == "fails"


def test_reproducer_options_are_validated():
    from core.jobs import InvalidOptions

    rep = get_reproducer("fourier_mamba")
    assert rep.validate({}).steps == 150 and rep.validate({"preset": "tiny"}).eval_crop == 16
    with pytest.raises(InvalidOptions):
        rep.validate({"eval_crop": 30})  # not a multiple of 4
    with pytest.raises(InvalidOptions):
        rep.validate({"stepz": 3})


def test_reading_says_whether_the_spec_training_budget_was_met():
    """Spec §6: ~2,000 crops of 64×64 and ≥ 5 min of training; the Reading states which of the two a run meets."""
    from methods.fourier_mamba.config import get_preset
    from methods.fourier_mamba.report import _reading, evidence

    crops = {"psnr_in": [20.0] * 4, "median_psnr_out": [20.2] * 4, "zigzag_psnr_out": [24.0, 23.0, 25.0, 24.5]}
    raw = {"seeds": [0, 1, 2], "crops": crops, "zigzag": {"gain": [4.1, 3.9, 4.3], "psnr_out": [24.1, 23.9, 24.3],
                                                          "train_s": [220.0, 230.0, 210.0]}}  # fmt: skip
    spec = get_preset("spec")
    short = _reading(evidence(raw), raw, spec)
    assert "220 s of training per model" in short and "2,000 training crops" in short
    assert "does not reach" in short and "at the spec's data budget (or beyond it) in less time" in short
    assert "fewer or smaller crops" in _reading(evidence(raw), raw, get_preset("cpu"))
    raw["zigzag"]["train_s"] = [310.0, 320.0, 330.0]
    long = _reading(evidence(raw), raw, spec)
    assert "≥ 5 min: met" in long and "does not reach" not in long


def test_the_longer_training_supplement_recomputes_from_its_raw_values():
    """docs/results/fourier_mamba/longer-training.md: every run's table is what its JSON file renders."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[3] / "docs" / "results" / "fourier_mamba"
    runs = sorted(docs.glob("longer-training-*.json"))
    text = (docs / "longer-training.md").read_text(encoding="utf-8")
    linked = sorted(set(re.findall(r"\]\((longer-training-\d+\.json)\)", text)))
    assert linked and linked == [p.name for p in runs], f"the doc links {linked}, stored: {[p.name for p in runs]}"
    for path in runs:
        ev = Evidence.load(path)
        assert ev.recompute() == [] and ev.table() in text and f"]({path.name})" in text
