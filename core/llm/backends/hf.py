"""The transformers backend: the registry's fp32 model, decoded step by step with a KV cache.

This is the reference backend: it runs wherever torch does and shares its model with
the methods that need hidden states, logits or LoRA (``get_local_model``). The loop
is plain incremental decoding (one forward pass over the prompt, then one token at a
time against the cache); token choice, constraints and stop strings are the shared
:class:`~core.llm.backends.decoding.Sequence`, exactly as in the llama.cpp backend.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from core.config import get_settings
from core.llm.backends.base import ContinuationScore, GenerationRequest, GenerationResult, continuation_ids
from core.llm.backends.chat import eos_ids, prompt_ids
from core.llm.backends.chat import text_messages as _text_messages  # noqa: F401 - kept for importers
from core.llm.backends.constraints import spec_from
from core.llm.backends.decoding import Sequence
from core.llm.local_models import get_local_model


class TransformersBackend:
    """Greedy (or seeded sampled) decoding on the shared transformers model; one reply at a time."""

    name = "transformers"

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self._lock = threading.Lock()  # one decode at a time per model (2 cores: no gain from overlap)

    def _sequence(self, req: GenerationRequest) -> tuple[object, Sequence]:
        from core.llm.backends.constraints import compile_spec

        spec = spec_from(req.json_schema, req.regex, req.grammar)
        if spec is not None:
            compile_spec(spec)  # a bad schema fails here, before the model is touched
        lm = get_local_model(self.model_name)
        ids = prompt_ids(lm.tokenizer, req.messages)
        room = get_settings().local_context - len(ids)
        if room <= 0:
            raise ValueError(
                f"prompt of {len(ids)} tokens does not fit the local context "
                f"({get_settings().local_context}); shorten it or raise PAPERWORKS_LOCAL_CONTEXT"
            )
        return lm, Sequence(req, ids, lm.tokenizer, eos_ids(lm.tokenizer), max_new=room)

    def _decode(self, lm, seq: Sequence) -> Iterator[str]:
        import torch

        with self._lock, torch.inference_mode():
            if seq.req.seed is not None:
                torch.manual_seed(seq.req.seed)
            kw = _forward_kwargs(lm.model)
            out = lm.model(
                input_ids=torch.tensor([seq.prompt]), use_cache=True, **{k: v for k, v in kw.items() if k != "_cache"}
            )
            while True:
                token = seq.choose(out.logits[0, -1].float().numpy())
                piece = seq.push(token)
                if piece:
                    yield piece
                if seq.finished:
                    return
                cache = out.cache if getattr(out, "cache", None) is not None else out.past_key_values
                out = lm.model(
                    input_ids=torch.tensor([[token]]),
                    use_cache=True,
                    **{kw["_cache"]: cache},
                    **{k: v for k, v in kw.items() if k != "_cache"},
                )

    def score(self, messages: list[dict], continuations: list[str]) -> list[ContinuationScore]:
        """Log-likelihood of each continuation after the chat prompt (one full forward pass each)."""
        import torch

        lm = get_local_model(self.model_name)
        ids = prompt_ids(lm.tokenizer, messages)
        out = []
        with self._lock, torch.inference_mode():
            for text in continuations:
                cont = continuation_ids(lm.tokenizer, text)
                if len(ids) + len(cont) > get_settings().local_context:
                    raise ValueError(
                        f"prompt and continuation ({len(ids) + len(cont)} tokens) do not fit the local context "
                        f"({get_settings().local_context}); shorten them or raise PAPERWORKS_LOCAL_CONTEXT"
                    )
                logits = lm.model(input_ids=torch.tensor([ids + cont])).logits[0].float()
                logp = torch.log_softmax(logits[len(ids) - 1 : -1], dim=-1)
                total = logp.gather(1, torch.tensor(cont)[:, None]).sum()
                out.append(
                    ContinuationScore(text=text, logprob=float(total), n_tokens=len(cont), prompt_tokens=len(ids))
                )
        return out

    def events(self, req: GenerationRequest) -> Iterator[str | GenerationResult]:
        """Text pieces as they are decoded, then the :class:`GenerationResult`."""
        lm, seq = self._sequence(req)
        yield from self._decode(lm, seq)
        yield seq.result()

    def generate(self, req: GenerationRequest) -> GenerationResult:
        lm, seq = self._sequence(req)
        for _ in self._decode(lm, seq):
            pass
        return seq.result()

    def stream(self, req: GenerationRequest) -> Iterator[str]:
        lm, seq = self._sequence(req)
        yield from self._decode(lm, seq)


def _forward_kwargs(model) -> dict:
    """Keyword names of this transformers version: the KV-cache argument and last-logits-only."""
    import inspect

    params = inspect.signature(model.forward).parameters
    kw: dict = {"_cache": "cache" if "cache" in params else "past_key_values"}
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            kw[name] = 1  # the prompt pass computes the vocabulary projection for its last position only
            break
    return kw
