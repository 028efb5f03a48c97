"""core.llm.model_available: one answer to "can the gateway serve this model here?" for every agent."""

from __future__ import annotations

import core.llm
from core.llm import local_models
from core.llm.local_models import LocalModelSource, model_available


def test_provider_models_are_taken_as_available():
    assert model_available("openai/gpt-4o-mini") is None


def test_the_default_local_model_is_available_and_an_unknown_one_says_why():
    assert model_available(f"local/{local_models.DEFAULT_LOCAL_MODEL}") is None
    why = model_available("local/no-such-model")
    assert why is not None and "unknown local model 'no-such-model'" in why


def test_a_registered_model_without_its_files_says_how_to_install(monkeypatch):
    missing = LocalModelSource("ghost", package="no_such_package_here", gguf_file="x.gguf")
    monkeypatch.setitem(local_models.LOCAL_MODELS, "ghost", missing)
    why = model_available("local/ghost")
    assert why is not None and "needs the package 'no_such_package_here'" in why


def test_a_transformers_directory_is_available(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert model_available(f"local/{tmp_path}") is None


def test_one_copy_for_every_agent():
    import agents.clinical_got.experiment as cgot
    import agents.medcog.experiment as medcog

    assert core.llm.model_available is model_available
    assert medcog.model_available is model_available and cgot.model_available is model_available
