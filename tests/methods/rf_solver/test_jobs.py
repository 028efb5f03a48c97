"""The registered jobs and reproducer: parameters, image references, and a real inline run."""

import io

import pytest
from PIL import Image

from core.jobs import InvalidParams, get_method, get_reproducer, null_context
from methods.rf_solver.edit import later_half


def test_registration_and_queue():
    for name in ("rf.edit", "rf.reconstruct"):
        spec = get_method(name)
        assert spec.queue == "cpu"
    assert get_reproducer("rf_solver")


@pytest.mark.parametrize(
    "params",
    [
        {},  # no image
        {"digit_index": 1, "example": "boy.jpg"},  # two images
        {"digit_index": 1, "steps": 5, "inject": 6},  # inject > steps
        {"digit_index": 1, "order": 3},
        {"digit_index": 1000},
        {"image_sha256": "../../etc/passwd"},
        {"digit_index": 1, "guidance": 0.5},
        {"digit_index": 1, "v_keys": "lower"},
        {"digit_index": 1, "cfg_halves": "null"},
        {"digit_index": 1, "blocks": "first_half"},
    ],
)
def test_edit_params_rejected(params):
    with pytest.raises(InvalidParams):
        get_method("rf.edit").validate(params)


def test_reconstruct_params():
    spec = get_method("rf.reconstruct")
    p = spec.validate({"digit_index": 0, "nfes": [20, 4, 4]})
    assert p.nfes == [4, 20]
    with pytest.raises(InvalidParams):
        spec.validate({"digit_index": 0, "nfes": [3]})


def test_preset_for_labels():
    from methods.rf_solver.experiment import preset_for_labels

    assert preset_for_labels("auto", "3", "8") == "digits"
    assert preset_for_labels("auto", "china", "flower") == "photo"
    with pytest.raises(ValueError):
        preset_for_labels("auto", "3", "flower")
    with pytest.raises(ValueError):
        preset_for_labels("photo", "3")


def test_resolve_uploaded_and_example_images(data_dir):
    from core.artifacts import get_artifact_store
    from methods.rf_solver.experiment import resolve_image

    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (250, 250, 250)).save(buf, format="PNG")
    sha = get_artifact_store().put_bytes(buf.getvalue(), name="x.png").sha256
    x = resolve_image(image_sha256=sha, digit_index=None, example=None, size=16, channels=1)
    assert x.shape == (1, 1, 16, 16) and float(x.max()) <= -0.9  # light background inverted to dark
    ex = resolve_image(image_sha256=None, digit_index=None, example="horse.jpg", size=32, channels=3)
    assert ex.shape == (1, 3, 32, 32) and float(ex.std()) > 0.05
    with pytest.raises(ValueError):
        resolve_image(image_sha256=None, digit_index=None, example="nope.jpg", size=32, channels=3)


def test_edit_job_runs_inline(monkeypatch, tiny_velocity):
    from methods.rf_solver import experiment

    monkeypatch.setattr(experiment, "load_velocity_model", lambda preset, progress, **_device: tiny_velocity)
    spec = get_method("rf.edit")
    params = spec.validate({"digit_index": 3, "source_label": "0", "target_label": "6", "steps": 6, "inject": 2})
    report = spec.run(params, null_context())
    assert report.metrics["cached_v_tensors"] == 2 * 2 * len(tiny_velocity.late_blocks)
    assert report.metrics["edit_nfe"] == 24 and report.metrics["recon_nfe"] == 24
    assert report.metrics["recon_psnr"] > 20
    assert report.metrics["device"] == "cpu" and report.metrics["dtype"] == "float32"
    assert {a.name for a in report.artifacts} >= {"source.png", "reconstruction.png", "edit.png", "side_by_side.png"}
    # the ablation options reach the edit: V keyed at the evaluation time costs one recording-only NFE,
    # and the later half of the single-stream blocks caches fewer tensors
    params = spec.validate(
        {"digit_index": 3, "source_label": "0", "target_label": "6", "steps": 6, "inject": 2, "v_keys": "eval"}
        | {"blocks": "later_half", "cfg_halves": "cond"}
    )
    report = spec.run(params, null_context())
    assert report.metrics["edit_nfe"] == 25
    assert report.metrics["cached_v_tensors"] == 2 * 2 * len(later_half(tiny_velocity.late_blocks))


def test_reconstruct_job_runs_inline(monkeypatch, tiny_velocity):
    from methods.rf_solver import experiment

    monkeypatch.setattr(experiment, "load_velocity_model", lambda preset, progress, **_device: tiny_velocity)
    spec = get_method("rf.reconstruct")
    report = spec.run(spec.validate({"digit_index": 5, "label": "1", "nfes": [4, 20]}), null_context())
    assert report.metrics["rf2_mse_nfe20"] < report.metrics["euler_mse_nfe20"]
    assert report.metrics["device"] == "cpu"
    assert report.artifact("recon_vs_nfe.png") is not None
    rows = report.data["rows"]
    assert [(r["solver"], r["nfe"]) for r in rows] == [
        ("Euler (equal NFE)", 8),
        ("RF-Solver-2", 8),
        ("Euler (equal NFE)", 40),
        ("RF-Solver-2", 40),
    ]
