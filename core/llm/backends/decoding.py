"""The per-reply decoding state shared by every backend.

A backend only turns prompt ids into next-token logits; everything a caller can
observe (token choice, constraint masks, stop strings, max tokens, streamed text,
finish reason) is decided here, so two backends that produce the same logits give
the same reply.

Token choice: repetition control first (llama.cpp's repeat penalty over the reply's
recent tokens, then a block of tokens that would repeat an n-gram of the reply; both
off unless the request asks), then the constraint mask, then greedy ``argmax`` when
``temperature`` is 0, otherwise a sample from ``softmax(logits / temperature)`` with a
per-request ``numpy`` generator seeded by ``seed``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.llm.backends.base import GenerationRequest, GenerationResult
from core.llm.backends.constraints import TokenConstraint, spec_from


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """``log softmax(logits)`` in float64 (stable: the max is subtracted first)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def log_softmax_at(logits: np.ndarray, token: int) -> float:
    """``log softmax(logits)[token]`` in float64 (stable: the max is subtracted first)."""
    z = np.asarray(logits, dtype=np.float64)
    m = float(z.max())
    return float(z[token] - m - np.log(np.exp(z - m).sum()))


def _held_suffix(text: str, stops: list[str]) -> int:
    """Length of the longest suffix of ``text`` that begins some stop string (kept back while streaming)."""
    best = 0
    for s in stops:
        for k in range(min(len(s) - 1, len(text)), best, -1):
            if text.endswith(s[:k]):
                best = k
                break
    return best


class Sequence:
    """One reply being decoded: choose a token from logits, push it, read the new text.

    Args:
        req: the request (max tokens, stop strings, temperature, seed, constraint).
        prompt: the prompt token ids.
        tokenizer: the Hugging Face tokenizer (detokenizes the reply).
        stop_ids: end-of-turn token ids.
        max_new: the most tokens the backend has room for (context left).
    """

    def __init__(
        self,
        req: GenerationRequest,
        prompt: list[int],
        tokenizer: Any,
        stop_ids: frozenset[int],
        max_new: int | None = None,
    ) -> None:
        self.req, self.prompt, self.tok, self.stop_ids = req, list(prompt), tokenizer, stop_ids
        self.max_new = max(1, min(req.max_tokens, max_new if max_new is not None else req.max_tokens))
        self.stops = [s for s in req.stop if s]
        self.ids: list[int] = []
        self.text = ""  # the reply so far, cut at a stop string once one appears
        self.emitted = 0  # characters of ``text`` already handed to a stream
        self.n_generated = 0  # tokens decoded, end-of-turn included
        self.finished = False
        self.finish_reason = "stop"
        self._rng = np.random.default_rng(req.seed) if req.temperature and req.temperature > 0 else None
        spec = spec_from(req.json_schema, req.regex, getattr(req, "grammar", None))
        self.constraint = TokenConstraint(spec, tokenizer, stop_ids) if spec is not None else None

    def choose(self, logits: np.ndarray) -> int:
        """The next token from this step's logits (a float32 copy is masked, never the caller's array)."""
        scores = np.array(logits, dtype=np.float32, copy=True)
        self._penalise_repeats(scores)
        if self.constraint is not None:
            self.constraint.mask(scores)
        if self._rng is None:
            return int(np.argmax(scores))
        z = scores / float(self.req.temperature)
        z -= z.max()
        p = np.exp(z)
        p /= p.sum()
        return int(self._rng.choice(len(p), p=p))

    def _penalise_repeats(self, scores: np.ndarray) -> None:
        """In place: the repeat penalty (llama.cpp's rule) and the n-gram block, over the reply's own tokens."""
        penalty = float(getattr(self.req, "repeat_penalty", 1.0) or 1.0)
        if penalty != 1.0 and self.ids:
            recent = np.unique(np.asarray(self.ids[-max(1, int(self.req.repeat_last_n)) :], dtype=np.int64))
            recent = recent[recent < len(scores)]
            vals = scores[recent]
            scores[recent] = np.where(vals > 0, vals / penalty, vals * penalty)
        n = int(getattr(self.req, "no_repeat_ngram", 0) or 0)
        if n >= 2 and len(self.ids) >= n:
            prefix = tuple(self.ids[-(n - 1) :])
            banned = {
                self.ids[i + n - 1] for i in range(len(self.ids) - n + 1) if tuple(self.ids[i : i + n - 1]) == prefix
            }
            for t in banned:
                if t < len(scores):
                    scores[t] = -np.inf

    def push(self, token: int) -> str:
        """Append a chosen token; returns the newly final text (may be empty) and updates ``finished``."""
        if self.finished:
            return ""
        self.n_generated += 1
        if token in self.stop_ids:
            self.finished = True
            return self._flush()
        self.ids.append(int(token))
        if self.constraint is not None:
            self.constraint.advance(token)
        full = self.tok.decode(self.ids, skip_special_tokens=True)
        cut = min((i for i in (full.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.text, self.finished = full[:cut], True
            return self._flush()
        self.text = full
        if self.constraint is not None and self.constraint.done:
            self.finished = True
            return self._flush()
        if len(self.ids) >= self.max_new:
            self.finished, self.finish_reason = True, "length"
            return self._flush()
        # hold back an incomplete UTF-8 character and anything that may start a stop string
        safe = len(full.rstrip("\ufffd"))
        safe -= _held_suffix(full[:safe], self.stops)
        out = full[self.emitted : safe] if safe > self.emitted else ""
        self.emitted = max(self.emitted, safe)
        return out

    def _flush(self) -> str:
        out = self.text[self.emitted :]
        self.emitted = len(self.text)
        return out

    def result(self) -> GenerationResult:
        return GenerationResult(
            text=self.text,
            prompt_tokens=len(self.prompt),
            completion_tokens=self.n_generated,
            finish_reason=self.finish_reason,
            token_ids=list(self.ids),
        )
