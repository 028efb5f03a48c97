"""Fixtures for the LMS3 tests: a tiny random Llama with SmolLM2's tokenizer, saved as a local model dir."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """A 2-layer, 4-head / 2-KV-head random Llama (hidden 64) that ``get_local_model(dir)`` loads."""
    from tests.methods.lms3.fakes import save_tiny_llama

    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_llama(tiny_llama_dir):
    from core.llm import get_local_model

    return get_local_model(str(tiny_llama_dir))
