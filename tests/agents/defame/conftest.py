"""Fixtures for DEFAME: a stage-aware scripted LLM and a small corpus in an ephemeral Chroma."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pytest

_MARKERS = (  # prompt marker -> stage (order matters: most specific first)
    ("# Your Actions", "plan"),
    ("# Search result", "summarize"),
    ("# Merged summary", "merge"),
    ("# Your analysis", "develop"),
    ("# Justification", "justify"),
    ("no evidence is given", "baseline"),
    ("# Your judgement", "judge"),
)
_counter = itertools.count()


def stage_of(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    for marker, stage in _MARKERS:
        if marker in text:
            return stage
    raise AssertionError(f"unrecognised prompt: {text[:200]}")


class StageScript:
    """Replies per stage (lists consumed in order; the last reply repeats), and the order of calls."""

    def __init__(self, replies: dict[str, list[str]]):
        self.replies = {k: list(v) for k, v in replies.items()}
        self.order: list[str] = []
        self.prompts: dict[str, list[str]] = defaultdict(list)

    def __call__(self, messages: list[dict]) -> str:
        stage = stage_of(messages)
        self.order.append(stage)
        self.prompts[stage].append(str(messages[-1]["content"]))
        queue = self.replies.get(stage)
        if not queue:
            raise AssertionError(f"no scripted reply for stage {stage}")
        return queue.pop(0) if len(queue) > 1 else queue[0]


@pytest.fixture
def stage_llm(scripted_llm):
    """``stage_llm({"plan": [...], ...}, scorer=None) -> (model_name, StageScript)``."""

    def make(replies: dict[str, list[str]], scorer=None):
        name = f"defame{next(_counter)}"
        script = StageScript(replies)
        scripted_llm(name, script, scorer)
        return f"scripted/{name}", script

    return make


CORPUS_DOCS = [
    (
        "d1",
        "The Golden Gate Bridge opened to traffic on May 27, 1937. It was the longest suspension bridge then.",
        "https://history.example.org/ggb",
        "2019-05-01",
    ),
    (
        "d2",
        "Construction of the Golden Gate Bridge began in 1933. The bridge opened in 1937 after four years.",
        "https://news.example.com/ggb-construction",
        "2020-01-10",
    ),
    (
        "d3",
        "Snopes rated the claim about the bridge opening in 1952 false.",
        "https://www.snopes.com/fact-check/ggb",
        "2020-02-01",
    ),
    (
        "d4",
        "A later article published after the claim: the bridge celebrated its anniversary.",
        "https://later.example.net/anniversary",
        "2024-06-01",
    ),
    (
        "d5",
        "Bananas are rich in potassium and grow in tropical regions.",
        "https://food.example.org/bananas",
        "2018-03-03",
    ),
]


@pytest.fixture
def corpus_store(ephemeral_store):
    """An ephemeral Chroma holding five documents in collection ``defame-test``."""
    ephemeral_store.add(
        "defame-test",
        ids=[d[0] for d in CORPUS_DOCS],
        documents=[d[1] for d in CORPUS_DOCS],
        metadatas=[{"url": d[2], "title": d[0], "date": d[3]} for d in CORPUS_DOCS],
    )
    return ephemeral_store
