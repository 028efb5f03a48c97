"""Greedy decoding with transformers ``generate`` on the registry's model."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from services.llm.backends.base import GenerationRequest, GenerationResult, truncate_at_stop
from services.llm.local_models import get_local_model


class _StopOnStrings:
    """A stopping criterion: stop once the decoded continuation contains a stop string."""

    def __init__(self, tokenizer, prompt_len: int, stop: list[str]) -> None:
        self.tok, self.prompt_len, self.stop = tokenizer, prompt_len, [s for s in stop if s]

    def __call__(self, input_ids, scores, **kwargs):  # noqa: ARG002 - transformers signature
        import torch

        if not self.stop:
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        tails = self.tok.batch_decode(input_ids[:, self.prompt_len:][:, -16:], skip_special_tokens=True)
        done = [any(s in t for s in self.stop) for t in tails]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class TransformersBackend:
    """Reference backend: correct everywhere, slower than llama.cpp on CPU."""

    name = "transformers"

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self._lock = threading.Lock()  # one generate at a time per model

    def _prepare(self, req: GenerationRequest):
        if req.json_schema is not None or req.regex is not None:
            raise ValueError("the transformers backend does not support constrained decoding; "
                             "use PAPERWORKS_LOCAL_BACKEND=llamacpp")
        lm = get_local_model(self.model_name)
        text = lm.tokenizer.apply_chat_template(_text_messages(req.messages), tokenize=False,
                                                add_generation_prompt=True)
        enc = lm.tokenizer(text, return_tensors="pt", add_special_tokens=False)
        return lm, enc

    def _gen_kwargs(self, lm, req: GenerationRequest, prompt_len: int) -> dict:
        from transformers import StoppingCriteriaList

        kw = dict(max_new_tokens=max(1, req.max_tokens), pad_token_id=lm.tokenizer.pad_token_id
                  or lm.tokenizer.eos_token_id,
                  stopping_criteria=StoppingCriteriaList([_StopOnStrings(lm.tokenizer, prompt_len, req.stop)]))
        if req.temperature and req.temperature > 0:
            kw.update(do_sample=True, temperature=req.temperature, top_p=1.0, top_k=0)
        else:
            kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        return kw

    def generate(self, req: GenerationRequest) -> GenerationResult:
        import torch

        lm, enc = self._prepare(req)
        n_prompt = enc["input_ids"].shape[1]
        with self._lock, torch.inference_mode():
            if req.seed is not None:
                torch.manual_seed(req.seed)
            out = lm.model.generate(**enc, **self._gen_kwargs(lm, req, n_prompt))
        new = out[0, n_prompt:]
        text = lm.tokenizer.decode(new, skip_special_tokens=True)
        text, stopped = truncate_at_stop(text, req.stop)
        hit_eos = len(new) > 0 and int(new[-1]) == lm.tokenizer.eos_token_id
        finish = "stop" if (stopped or hit_eos or len(new) < req.max_tokens) else "length"
        return GenerationResult(text=text, prompt_tokens=n_prompt, completion_tokens=int(len(new)),
                                finish_reason=finish)

    def stream(self, req: GenerationRequest) -> Iterator[str]:
        import torch
        from transformers import TextIteratorStreamer

        lm, enc = self._prepare(req)
        n_prompt = enc["input_ids"].shape[1]
        streamer = TextIteratorStreamer(lm.tokenizer, skip_prompt=True, skip_special_tokens=True)
        kw = self._gen_kwargs(lm, req, n_prompt)

        def work() -> None:
            with self._lock, torch.inference_mode():
                lm.model.generate(**enc, **kw, streamer=streamer)

        th = threading.Thread(target=work, daemon=True)
        th.start()
        emitted = ""
        for piece in streamer:
            candidate = emitted + piece
            cut, stopped = truncate_at_stop(candidate, req.stop)
            if cut[len(emitted):]:
                yield cut[len(emitted):]
            emitted = cut
            if stopped:
                break
        th.join()


def _text_messages(messages: list[dict]) -> list[dict]:
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
