"""Answer accuracy on small subsets (spec §6.1 item 5): greedy decoding and answer extraction.

Decoding runs on the raw §3.5 prompt (no chat template), exactly the text whose
gold NLL is scored, and stops at ``max_new_tokens``, at EOS, or when the model
starts a new ``\\nQ:`` block (nothing after it is an answer to this query).

* MAWPS: the first number in the completion (the text after the prompt's final
  ``A:``), else the last number; correct if ``|pred − gold| < 1e-4``.
* GSM8K: the number after ``####``, else the last number; commas stripped.
"""

from __future__ import annotations

import re
from typing import Any

import torch

_NUM = re.compile(r"-?\d[\d,]*\.?\d*|-?\.\d+")
STOP = "\nQ:"


def _to_float(s: str) -> float | None:
    s = s.replace(",", "").rstrip(".")
    try:
        return float(s)
    except ValueError:
        return None


def extract_mawps(completion: str) -> float | None:
    """First number in the completion, else the last one (None if there is none)."""
    nums = _NUM.findall(completion)
    for cand in nums[:1] + nums[-1:]:
        v = _to_float(cand)
        if v is not None:
            return v
    return None


def extract_gsm8k(completion: str) -> float | None:
    """The number after ``####``, else the last number; commas stripped."""
    m = re.search(r"####\s*(" + _NUM.pattern + ")", completion)
    if m:
        return _to_float(m.group(1))
    nums = _NUM.findall(completion)
    return _to_float(nums[-1]) if nums else None


def is_correct(pred: float | None, gold: str, tol: float = 1e-4) -> bool:
    g = _to_float(gold)
    return pred is not None and g is not None and abs(pred - g) < tol


def greedy_complete(model: Any, tokenizer: Any, prompt: str, max_new_tokens: int) -> str:
    """Greedy continuation of ``prompt`` (KV cache), cut at EOS or at a new ``\\nQ:`` block."""
    dev = next(model.parameters()).device
    ids = torch.tensor([tokenizer(prompt)["input_ids"]], device=dev)
    eos = tokenizer.eos_token_id
    eos_set = set(eos if isinstance(eos, (list, tuple)) else [eos])
    out_ids: list[int] = []
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True)
        for _ in range(max_new_tokens):
            token = int(out.logits[0, -1].argmax())
            if token in eos_set:
                break
            out_ids.append(token)
            text = tokenizer.decode(out_ids, skip_special_tokens=True)
            if STOP in text:
                return text.split(STOP)[0]
            out = model(
                input_ids=torch.tensor([[token]], device=dev), past_key_values=out.past_key_values, use_cache=True
            )
    return tokenizer.decode(out_ids, skip_special_tokens=True)
