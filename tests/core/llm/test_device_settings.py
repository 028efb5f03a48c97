"""The LLM side's devices come from settings: llama.cpp's offloaded layers and the embedder's device."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from tests.core.llm.conftest import HAS_LLAMA_CPP, NO_LLAMA_CPP


def test_the_settings_read_from_the_environment(monkeypatch):
    from core.config import Settings

    plain = Settings()
    assert (plain.gpu_workers, plain.local_gpu_layers, plain.embedding_device) == (False, 0, "cpu")
    monkeypatch.setenv("PAPERWORKS_GPU_WORKERS", "1")
    monkeypatch.setenv("PAPERWORKS_LOCAL_GPU_LAYERS", "-1")
    monkeypatch.setenv("PAPERWORKS_EMBEDDING_DEVICE", "auto")
    s = Settings()
    assert (s.gpu_workers, s.local_gpu_layers, s.embedding_device) == (True, -1, "auto")
    monkeypatch.setenv("PAPERWORKS_EMBEDDING_DEVICE", "tpu")
    with pytest.raises(ValidationError, match="embedding_device"):
        Settings()
    monkeypatch.setenv("PAPERWORKS_EMBEDDING_DEVICE", "cpu")
    monkeypatch.setenv("PAPERWORKS_LOCAL_GPU_LAYERS", "-2")
    with pytest.raises(ValidationError, match="local_gpu_layers"):
        Settings()


@pytest.fixture
def no_cuda(monkeypatch):
    import core.device

    monkeypatch.setattr(core.device, "cuda_available", lambda: False)


def test_the_embedder_runs_where_the_setting_says(settings, monkeypatch, no_cuda):
    import sentence_transformers

    from core.device import DeviceUnavailable
    from core.llm import embeddings

    made: list[str] = []
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", lambda path, device: made.append(device))
    monkeypatch.setattr(settings, "embedding_device", "cpu")
    embeddings.get_embedder.__wrapped__()
    monkeypatch.setattr(settings, "embedding_device", "auto")
    embeddings.get_embedder.__wrapped__()
    assert made == ["cpu", "cpu"]  # auto without CUDA: the CPU
    monkeypatch.setattr(settings, "embedding_device", "cuda")
    with pytest.raises(DeviceUnavailable, match="PAPERWORKS_EMBEDDING_DEVICE=cuda"):
        embeddings.get_embedder.__wrapped__()
    assert len(made) == 2


def test_the_embedder_on_cuda_where_there_is_cuda(settings, monkeypatch):
    import sentence_transformers

    import core.device
    from core.llm import embeddings

    made: list[str] = []
    monkeypatch.setattr(core.device, "cuda_available", lambda: True)
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", lambda path, device: made.append(device))
    for wanted in ("cuda", "auto"):
        monkeypatch.setattr(settings, "embedding_device", wanted)
        embeddings.get_embedder.__wrapped__()
    assert made == ["cuda", "cuda"]


class _FakeLlama:
    def __init__(self, offload: bool) -> None:
        self.offload = offload

    def llama_supports_gpu_offload(self) -> bool:
        return self.offload


def test_llamacpp_offloads_the_configured_layers_only_on_a_gpu_build(settings, monkeypatch, caplog):
    from core.llm.backends import llamacpp

    monkeypatch.setattr(settings, "local_gpu_layers", 0)
    assert llamacpp._gpu_layers(_FakeLlama(True)) == 0
    monkeypatch.setattr(settings, "local_gpu_layers", -1)
    assert llamacpp._gpu_layers(_FakeLlama(True)) == -1
    monkeypatch.setattr(settings, "local_gpu_layers", 12)
    assert llamacpp._gpu_layers(_FakeLlama(True)) == 12
    with caplog.at_level(logging.WARNING, logger=llamacpp.log.name):
        assert llamacpp._gpu_layers(_FakeLlama(False)) == 0
    assert "local_gpu_layers=12 ignored" in caplog.text and "GGML_CUDA" in caplog.text


@pytest.mark.skipif(not HAS_LLAMA_CPP, reason=NO_LLAMA_CPP)
def test_llamacpp_engine_loads_the_model_with_those_layers(settings, monkeypatch, tmp_path):
    import llama_cpp

    from core.llm.backends import llamacpp
    from core.llm.backends.base import BackendUnavailable

    seen: list[int] = []

    def load(path, params):
        seen.append(params.n_gpu_layers)
        return None  # "could not load": the engine stops right after reading the params

    monkeypatch.setattr(llama_cpp, "llama_model_load_from_file", load)
    monkeypatch.setattr(llama_cpp, "llama_supports_gpu_offload", lambda: True)
    monkeypatch.setattr(settings, "local_gpu_layers", 7)
    with pytest.raises(BackendUnavailable):
        llamacpp._Engine(tmp_path / "none.gguf", 64, 1, 1)
    monkeypatch.setattr(settings, "local_gpu_layers", 0)
    with pytest.raises(BackendUnavailable):
        llamacpp._Engine(tmp_path / "none.gguf", 64, 1, 1)
    assert seen == [7, 0]
