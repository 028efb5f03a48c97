"""Chat prompts as token ids: one tokenizer and one chat template for every backend.

Both backends decode from exactly the same prompt ids (the SmolLM2 chat template
applied by the Hugging Face tokenizer), so their greedy outputs can be compared
token for token and a constraint compiled for one tokenizer fits both.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core.lazy import MODEL_LOADING, locked_cache
from core.llm.local_models import LocalModelError, converted_dir, resolve_source

log = logging.getLogger(__name__)


def text_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Flatten OpenAI-style content parts to text (the local model is text-only)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for p in content:
                if p.get("type") == "text":
                    parts.append(p.get("text", ""))
                elif p.get("type") == "image_url":
                    parts.append("[image omitted: this model cannot see images]")
            content = "\n".join(parts)
        out.append({"role": m.get("role", "user"), "content": content or ""})
    return out


def prompt_ids(tokenizer: Any, messages: list[dict[str, Any]]) -> list[int]:
    """Token ids of the chat prompt, ending with the assistant turn header."""
    text = tokenizer.apply_chat_template(text_messages(messages), tokenize=False, add_generation_prompt=True)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def eos_ids(tokenizer: Any) -> frozenset[int]:
    """Token ids that end a reply: the tokenizer's EOS plus the chat end-of-turn markers."""
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    vocab = tokenizer.get_vocab()
    for marker in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>"):
        if marker in vocab:
            ids.add(vocab[marker])
    return frozenset(ids)


def load_tokenizer(name: str) -> Any:
    """The Hugging Face tokenizer of a local model (cached; loaded once when threads ask together:
    transformers' lazy imports are not thread-safe). See :func:`_load_tokenizer`."""
    return _load_tokenizer(name)


@locked_cache(maxsize=4, lock=MODEL_LOADING)
def _load_tokenizer(name: str) -> Any:
    """The Hugging Face tokenizer of a local model without loading its weights.

    Uses the converted transformers directory when it exists, else reads the
    tokenizer straight from the GGUF file (a second or two, no weight conversion).
    """
    from transformers import AutoTokenizer

    src = resolve_source(name)
    if src.path:
        return AutoTokenizer.from_pretrained(src.path)
    from core.config import get_settings

    done = Path(get_settings().cache_dir) / "models" / src.name
    if (done / ".complete").exists():
        return AutoTokenizer.from_pretrained(str(converted_dir(name)))
    gguf = src.gguf_path()
    log.info("reading the %s tokenizer from %s", src.name, gguf.name)
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def gguf_path(name: str) -> Path:
    """The GGUF file of a registered local model (``LocalModelError`` when it has none or it is missing)."""
    src = resolve_source(name)
    if src.path:
        ggufs = sorted(Path(src.path).glob("*.gguf"))
        if not ggufs:
            raise LocalModelError(f"{src.path} holds no .gguf file for the llama.cpp backend")
        return ggufs[0]
    return src.gguf_path()
