"""Fixtures for the local-model tests: the SmolLM2 tokenizer and a ready backend of each kind."""

from __future__ import annotations

import importlib.util

import pytest

HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
NO_LLAMA_CPP = "llama-cpp-python is not installed (pip install llama-cpp-python==0.3.36)"
MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="session")
def tokenizer():
    from core.llm.backends.chat import load_tokenizer

    return load_tokenizer(MODEL)


@pytest.fixture(scope="session")
def llamacpp_backend():
    if not HAS_LLAMA_CPP:
        pytest.skip(NO_LLAMA_CPP)
    from core.llm.backends.factory import get_backend

    return get_backend("llamacpp", MODEL)


@pytest.fixture(scope="session")
def hf_backend():
    from core.llm.backends.factory import get_backend

    return get_backend("transformers", MODEL)


@pytest.fixture(scope="session")
def fast_backend():
    """The backend ``auto`` picks: llama.cpp where installed, transformers otherwise."""
    from core.llm.backends.factory import get_backend

    return get_backend("auto", MODEL)
