"""A scripted model answering every Clinical GoT node in its format."""

from __future__ import annotations

import time

import pytest


def node_reply(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    if "Question: what is the lesion grade" in text:
        return "[ans]: level2, 0.0200"
    if "Question: which of the 62 regions" in text:
        return "[ans]: 23, 94, 71"
    if "Question: what is the MRI injury score" in text:
        return "[ans]: Score 2."
    if "Question: will the 2-year" in text:
        return "[ans]: 1" if "Score 2" in text or "Score 3" in text else "[ans]: 0"
    raise AssertionError(f"unexpected prompt: {text[-300:]}")


@pytest.fixture
def cgot_model(scripted_llm):
    name = f"cgot{time.monotonic_ns()}"
    scripted_llm(name, node_reply)
    return f"scripted/{name}"
