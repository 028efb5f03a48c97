"""Every LLM call of the agent: prompt fitting, images, constraints, and a per-call log.

* The record is the part of a prompt that gets cut when the prompt is longer
  than ``max_prompt_chars`` (the claim and the latest blocks stay), never the
  instructions (spec §6).
* A vision model gets the prompt split at each ``<image:k>``: the reference text
  followed by the image itself (spec §3.3). A text-only model sees the reference
  marked "[image not viewable by this model]" and learns about images from the
  tools' text (OCR, EXIF, reverse-search hits).
* Plan calls pass a regular expression to the local provider when it supports
  constrained decoding; the judge writes free text first and is constrained only
  on a retry after an unparsable answer (``judge_free_first``). A provider that
  refuses constraints is remembered and the spec's parsing fallbacks and retries
  do the work instead.
* Local models get repetition control (``repeat_penalty``, ``no_repeat_ngram``).
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path
from typing import Any

from agents.defame.config import DefameContext
from agents.defame.document import IMAGE_REF, render_record
from agents.defame.prompts import SYSTEM

log = logging.getLogger(__name__)

_CUT_NOTE = "\n\n[... part of the record was cut to fit the model's context ...]\n\n"
_constraint_support: dict[str, bool] = {}
_lock = threading.Lock()


def model_name(ctx: DefameContext) -> str:
    from core.config import get_settings

    return ctx.config.model or get_settings().llm_model


def is_text_only(ctx: DefameContext) -> bool:
    from core.llm.gateway import supports_vision

    return not supports_vision(model_name(ctx))


def fit_record(record_md: str, budget: int) -> str:
    """Cut the middle of the record so it fits ``budget`` characters (head: claim; tail: latest blocks)."""
    if len(record_md) <= budget:
        return record_md
    budget = max(budget, 200)
    head = min(len(record_md) // 3, budget // 3)
    tail = budget - head - len(_CUT_NOTE)
    return record_md[:head] + _CUT_NOTE + record_md[-max(tail, 0) :]


def record_text(state: dict[str, Any], ctx: DefameContext) -> str:
    return render_record(state["claim"], state.get("record") or [], text_only=is_text_only(ctx))


def fill(template: str, ctx: DefameContext, *, record: str | None = None, **fields: Any) -> str:
    """``template.format(record=..., **fields)`` with the record cut to the prompt budget."""
    if record is None:
        return template.format(**fields)
    fixed = len(template.format(record="", **fields))
    return template.format(record=fit_record(record, ctx.config.max_prompt_chars - fixed), **fields)


def _interleave(prompt: str, media: dict[str, str]) -> list[Any]:
    """Text and image paths in order: each ``<image:k>`` stays as text and its image follows it."""
    parts: list[Any] = []
    pos = 0
    for m in IMAGE_REF.finditer(prompt):
        parts.append(prompt[pos : m.end()])
        path = media.get(m.group(1))
        if path:
            parts.append(Path(path))  # a Path (not a str) is an image for the gateway
        pos = m.end()
    parts.append(prompt[pos:])
    return parts


def call_llm(
    ctx: DefameContext,
    stage: str,
    prompt: str,
    *,
    round_no: int,
    max_tokens: int,
    media: dict[str, str] | None = None,
    regex: str | None = None,
    attempt: int = 1,
) -> tuple[str, dict[str, Any]]:
    """One completion through :func:`core.llm.complete`; returns (text, call-log entry)."""
    from core.llm import complete

    cfg = ctx.config
    model = model_name(ctx)
    text_only = is_text_only(ctx)
    payload: Any = prompt if (text_only or not media) else _interleave(prompt, media)
    kwargs: dict[str, Any] = dict(
        system=SYSTEM, model=model, max_tokens=max_tokens, temperature=cfg.temperature, tag=stage
    )
    if not model.startswith("scripted/"):
        kwargs["seed"] = cfg.seed
    if model.startswith("local/"):
        kwargs["repeat_penalty"] = cfg.repeat_penalty
        kwargs["no_repeat_ngram"] = cfg.no_repeat_ngram
    use_regex = (
        regex is not None
        and cfg.constrained == "auto"
        and model.startswith("local/")
        and _constraint_support.get(model, True)
    )
    constrained = False
    if use_regex:
        try:
            c = complete(payload, regex=regex, **kwargs)
            constrained = True
            with _lock:
                _constraint_support[model] = True
        except Exception as exc:
            if "constrain" not in str(exc).lower() and not isinstance(exc, ValueError):
                raise
            log.info("%s has no constrained decoding (%s); using parse fallbacks", model, exc)
            with _lock:
                _constraint_support[model] = False
            c = complete(payload, **kwargs)
    else:
        c = complete(payload, **kwargs)
    entry = {
        "stage": stage,
        "round": round_no,
        "attempt": attempt,
        "prompt_tokens": c.prompt_tokens,
        "completion_tokens": c.completion_tokens,
        "latency_s": round(c.latency_s, 3),
        "constrained": constrained,
        "parsed": None,
    }
    return c.text, entry


def plan_regex(names: list[str], image_ids: list[str], max_actions: int = 5) -> str:
    """What a constrained planner may write: a short reasoning line, then one code block of 1..max_actions."""
    text_names = [n for n in names if n in ("web_search", "image_search")]
    img_names = [n for n in names if n not in text_names]
    alts = []
    if text_names:
        alts.append(rf'(?:{"|".join(text_names)})\("[A-Za-z0-9 ,.\'-]{{3,60}}"\)')
    if img_names and image_ids:
        alts.append(rf"(?:{'|'.join(img_names)})\(<image:(?:{'|'.join(image_ids)})>\)")
    line = "(?:" + "|".join(alts) + ")" if alts else r'web_search\("[A-Za-z0-9 ,.\'-]{3,60}"\)'
    return rf"[A-Za-z0-9 ,.'-]{{0,100}}\n```\n{line}(?:\n{line}){{0,{max(0, max_actions - 1)}}}\n```"


def judge_regex(labels: list[str]) -> str:
    """A short reasoning sentence (at most 120 characters, so a small token budget always reaches the
    label) ending in one allowed label in backticks."""
    alts = "|".join(re.escape(lbl) for lbl in labels)
    return rf"[A-Za-z0-9 ,.;:'()%-]{{10,120}}`(?:{alts})`"
