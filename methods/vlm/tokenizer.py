"""A word-level tokenizer for the tiny CLIP: lower-cased words and punctuation, fixed vocabulary.

Ids: ``0 <pad>``, ``1 <unk>``, ``2 <bos>``, ``3 <eos>``, then the words in sorted order. A text
becomes ``<bos> w1 … wn <eos>`` padded with ``<pad>`` to the batch's longest sequence (at most
``context_length``; longer texts are cut and still end in ``<eos>``). The vocabulary is built from
the caption grammar, the class names and the WordNet word lists, so outlier nouns never map to
``<unk>`` (they are tokens the contrastive training may never have seen, as in real CLIP).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")
_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def words(text: str) -> list[str]:
    """Lower-case ``text`` and split it into words and single punctuation marks (``_`` counts as a space)."""
    return _WORD.findall(text.lower().replace("_", " "))


class WordTokenizer:
    """Texts ↔ ids over a fixed word vocabulary."""

    pad_token_id, unk_token_id, bos_token_id, eos_token_id = PAD, UNK, BOS, EOS

    def __init__(self, vocab: Sequence[str], context_length: int = 32):
        vocab = list(vocab)
        if tuple(vocab[:4]) != SPECIALS:
            raise ValueError(f"the vocabulary must start with {SPECIALS}")
        if len(set(vocab)) != len(vocab):
            raise ValueError("the vocabulary has duplicate entries")
        if context_length < 3:
            raise ValueError("context_length must be >= 3")
        self.vocab = vocab
        self.index = {w: i for i, w in enumerate(vocab)}
        self.context_length = context_length

    @classmethod
    def build(cls, texts: Iterable[str], context_length: int = 32) -> WordTokenizer:
        """A tokenizer whose vocabulary is every word of ``texts``."""
        seen: set[str] = set()
        for t in texts:
            seen.update(words(t))
        return cls([*SPECIALS, *sorted(seen - set(SPECIALS))], context_length)

    def __len__(self) -> int:
        return len(self.vocab)

    def covers(self, text: str) -> bool:
        """True when every word of ``text`` is in the vocabulary."""
        return all(w in self.index for w in words(text))

    def encode(self, text: str) -> list[int]:
        ids = [self.index.get(w, UNK) for w in words(text)][: self.context_length - 2]
        return [BOS, *ids, EOS]

    def __call__(self, texts: Sequence[str] | str) -> torch.Tensor:
        """(n, L) int64 ids, padded to the longest text (L ≤ context_length)."""
        if isinstance(texts, str):
            texts = [texts]
        seqs = [self.encode(t) for t in texts]
        out = torch.full((len(seqs), max(len(s) for s in seqs)), PAD, dtype=torch.long)
        for i, s in enumerate(seqs):
            out[i, : len(s)] = torch.tensor(s)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self.vocab[i] for i in ids if i not in (PAD, BOS, EOS))

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"context_length": self.context_length, "vocab": self.vocab}))

    @classmethod
    def load(cls, path: Path) -> WordTokenizer:
        blob = json.loads(Path(path).read_text())
        return cls(blob["vocab"], blob["context_length"])
