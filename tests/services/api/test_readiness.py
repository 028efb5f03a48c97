"""``POST /v1/readiness``: a job that will first train a model says so (and for how long) before it is submitted."""

from __future__ import annotations

import pytest


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """An empty model cache (the API reads the settings per call)."""
    from core.config import get_settings

    monkeypatch.setenv("PAPERWORKS_CACHE_DIR", str(tmp_path / "cache"))
    get_settings.cache_clear()
    yield tmp_path / "cache"
    get_settings.cache_clear()


def test_a_job_whose_model_is_not_cached_announces_the_training(api_client, empty_cache):
    r = api_client.post("/v1/readiness", json={"method": "vlm.zeroshot", "params": {"dataset": "digits", "index": 3}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ready"] is False and body["phase"] == "train" and body["seconds"] == 105
    assert "first trains the default tiny CLIP (about 105 s" in body["notice"]


def test_once_the_model_is_cached_the_job_is_ready(api_client, empty_cache):
    from methods.rf_solver.checkpoints import model_dir
    from methods.rf_solver.config import PRESETS

    params = {"digit_index": 0, "source_label": "3", "target_label": "8"}
    first = api_client.post("/v1/readiness", json={"method": "rf.edit", "params": params}).json()
    assert first["ready"] is False and first["model"] == "the digits RF model" and first["seconds"] == 160
    folder = model_dir(PRESETS["digits"])
    assert str(folder).startswith(str(empty_cache))  # the job's own cache path, under the configured cache
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    again = api_client.post("/v1/readiness", json={"method": "rf.edit", "params": params}).json()
    assert again["ready"] is True and again["notice"] is None


def test_the_params_choose_the_model(api_client, empty_cache):
    photo = {"example": "boy.jpg", "source_label": "china", "target_label": "flower"}
    assert api_client.post("/v1/readiness", json={"method": "rf.edit", "params": photo}).json()["model"] == (
        "the photo RF model"
    )
    test_clip = {"preset": "test"}
    assert (
        "test tiny CLIP"
        in api_client.post("/v1/readiness", json={"method": "vlm.train", "params": test_clip}).json()["notice"]
    )


def test_jobs_without_a_model_to_build_and_unknown_methods(api_client, empty_cache):
    assert api_client.post("/v1/readiness", json={"method": "llm.complete", "params": {}}).json()["ready"] is True
    assert api_client.post("/v1/readiness", json={"method": "no.such", "params": {}}).status_code == 404
    assert (
        api_client.post("/v1/readiness", json={"method": "llm.complete"}, headers={"Authorization": ""}).status_code
        == 401
    )


def test_every_check_names_a_registered_method():
    from core.jobs.registry import get_method, load_all
    from services.api.routes.readiness import CHECKS

    load_all()
    for name in CHECKS:
        assert get_method(name).name == name
