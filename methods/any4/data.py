"""Evaluation and training text (spec §5, §6.4) and the fixed perplexity windows.

- WikiText-2 raw test, already joined the GPTQ way (``wikitext2_test/``);
- "math text": GSM8K and MATH **test** problems with their solutions, interleaved
  (held-out; reported as math-text perplexity, never as C4);
- training text for the clean model: GSM8K and MATH **train** problems + solutions.

Windows follow §6.4: tokenize once, cut the first ``n`` non-overlapping windows of
``seqlen`` tokens. Only a prefix of the text long enough for those windows is
tokenized (BPE is local, so the tokens are those of the full text).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import torch

Encode = Callable[[str], list[int]]

WIKITEXT = Path("wikitext2_test") / "wikitext2_raw_test_joined.txt"


def _jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _require(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"data file missing: {path}")
    return path


def wikitext_text(data_dir: Path) -> str:
    return _require(Path(data_dir) / WIKITEXT).read_text(encoding="utf-8")


def gsm8k_records(data_dir: Path, split: str) -> list[str]:
    return [f"{r['question']}\n{r['answer']}" for r in _jsonl(_require(Path(data_dir) / "gsm8k" / f"{split}.jsonl"))]


def math_records(data_dir: Path, split: str) -> list[str]:
    path = _require(Path(data_dir) / "math_lms3" / f"{split}.jsonl")
    return [f"{r['problem']}\n{r['solution']}" for r in _jsonl(path)]


def math_eval_text(data_dir: Path) -> str:
    """GSM8K test and MATH test records interleaved (one of each in turn), blank line between."""
    a, b = gsm8k_records(data_dir, "test"), math_records(data_dir, "test")
    mixed = [r for pair in zip(a, b) for r in pair] + a[len(b) :] + b[len(a) :]
    return "\n\n".join(mixed)


def math_train_text(data_dir: Path, seed: int = 0, max_chars: int | None = None) -> str:
    """GSM8K + MATH train records, shuffled with ``seed``, blank line between (cut at ``max_chars``)."""
    recs = gsm8k_records(data_dir, "train") + math_records(data_dir, "train")
    random.Random(seed).shuffle(recs)
    out, n = [], 0
    for r in recs:
        out.append(r)
        n += len(r) + 2
        if max_chars is not None and n >= max_chars:
            break
    return "\n\n".join(out)


def encode_prefix(encode: Encode, text: str, n_tokens: int, chars_per_token: float = 3.0) -> torch.Tensor:
    """Token ids of a prefix of ``text`` holding at least ``n_tokens`` tokens (all of it if shorter)."""
    n_chars = int(n_tokens * chars_per_token) + 256
    while True:
        ids = encode(text[:n_chars])
        if len(ids) > n_tokens + 8 or n_chars >= len(text):
            return torch.tensor(ids, dtype=torch.long)
        n_chars *= 2


def make_windows(ids: torch.Tensor, seqlen: int, n_windows: int) -> torch.Tensor:
    """The first ``n_windows`` non-overlapping windows of ``seqlen`` tokens → (n, seqlen)."""
    n = min(n_windows, ids.numel() // seqlen)
    if n < 1:
        raise ValueError(f"text too short for one window of {seqlen} tokens")
    return ids[: n * seqlen].view(n, seqlen).clone()


def text_windows(encode: Encode, text: str, seqlen: int, n_windows: int) -> torch.Tensor:
    return make_windows(encode_prefix(encode, text, seqlen * n_windows), seqlen, n_windows)
