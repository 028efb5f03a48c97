"""Token counts for context budgets (MultiCogEval's 2 048-token demo rule, the simulator's summary trigger).

A ``local/<name>`` model is counted with its own tokenizer and chat template (the ids it will
actually decode from); any other model with the default local tokenizer as a proxy, since a hosted
model's tokenizer is not on this machine (the counts differ by a few percent between BPE vocabularies).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

TokenCounter = Callable[[str], int]


@functools.lru_cache(maxsize=8)
def token_counter(model: str) -> TokenCounter:
    """A function text -> number of prompt tokens when ``text`` is sent as one user turn to ``model``."""
    from core.llm import DEFAULT_LOCAL_MODEL
    from core.llm.backends.chat import load_tokenizer, prompt_ids

    name = model.split("/", 1)[1] if model.startswith("local/") else DEFAULT_LOCAL_MODEL
    try:
        tok = load_tokenizer(name)
    except Exception:  # an unknown local name: fall back to the default tokenizer
        tok = load_tokenizer(DEFAULT_LOCAL_MODEL)
    if model.startswith("local/"):
        return lambda text: len(prompt_ids(tok, [{"role": "user", "content": text}]))
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def messages_tokens(count: TokenCounter, messages: list[dict[str, str]]) -> int:
    """Approximate tokens of a chat (each turn counted as text plus a small per-turn overhead)."""
    return sum(count(m.get("content", "")) + 4 for m in messages)


def words_counter(text: str) -> int:
    """A tokenizer-free counter (≈ 1.3 tokens per word) for tests and models without a tokenizer."""
    return int(len(text.split()) * 1.3) + 1
