"""Stage 5, Predict (spec §3.2, checks 3-4): a verdict with class definitions.

A judgement is *final* in the last round or when the planner came back with no
new action; only then is the benchmark's own label set offered. A non-final
judgement also offers "not enough information" so the model can ask for
another round. The answer's last code span (then bold, then a substring) is
matched to an allowed label. The first attempt is free text (the judge's two
paragraphs, ``judge_free_first``); on failure the call is retried with a
reminder and, where the local provider has it, constrained decoding as the
fallback; after ``retries`` failures the verdict is REFUSED. Lines that echo
the prompt are dropped from the answer before it enters the record. Only the last judgement
enters the record, as ``## Final Judgement``.

``verdict="likelihood"`` / ``"calibrated"`` (not the paper's; for small local models whose
answer is a fixed first-token preference): the judge is asked for the option alone and each
option's likelihood as that reply is read off the model (:func:`core.llm.score`); "calibrated"
divides it by the option's mean probability under content-free inputs ("N/A", "[MASK]", "" in
place of the record or claim; Zhao et al., 2021) and renormalises. The probabilities enter the
record with the chosen option. A model that cannot score falls back to generation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, judge_regex, model_name, record_text
from agents.defame.config import DefameContext
from agents.defame.guard import strip_echo
from agents.defame.labels import Benchmark, Label, get_benchmark
from agents.defame.parsing import extract_verdict
from agents.defame.prompts import (
    BASELINE,
    BASELINE_SCORED,
    CONTENT_FREE,
    JUDGE,
    JUDGE_REMINDER,
    JUDGE_SCORED,
    SYSTEM,
)
from agents.defame.state import State

log = logging.getLogger(__name__)

_content_free: dict[tuple[str, ...], np.ndarray] = {}  # (model, prompts..., options...) -> mean probabilities
_cf_locks: dict[tuple[str, ...], threading.Lock] = {}
_cf_lock = threading.Lock()


def options_text(bench: Benchmark, labels: list[Label]) -> str:
    return "\n".join(f"- `{lbl.value}`: {bench.definition(lbl)}" for lbl in labels)


def judge_with_retries(
    ctx: DefameContext,
    prompt: str,
    labels: list[Label],
    *,
    stage: str,
    round_no: int,
    media: dict[str, str] | None = None,
) -> tuple[Label, str, list[dict[str, Any]]]:
    """Ask until a label parses (``retries`` attempts, each with the reminder appended); else REFUSED."""
    calls: list[dict[str, Any]] = []
    answer = ""
    for attempt in range(1, ctx.config.retries + 1):
        p = prompt if attempt == 1 else prompt + JUDGE_REMINDER
        free = attempt == 1 and ctx.config.judge_free_first
        answer, entry = call_llm(
            ctx,
            stage,
            p,
            round_no=round_no,
            max_tokens=ctx.config.budget.judge,
            media=media,
            regex=None if free else judge_regex([lbl.value for lbl in labels]),
            attempt=attempt,
        )
        answer = strip_echo(answer)
        label = extract_verdict(answer, labels)
        entry["parsed"] = label is not None
        calls.append(entry)
        if label is not None:
            return label, answer, calls
    return Label.REFUSED, answer, calls


def _option_probs(ctx: DefameContext, prompt: str, conts: list[str], stage: str) -> tuple[np.ndarray, Any]:
    from core.llm import score

    res = score(prompt, conts, system=SYSTEM, model=model_name(ctx), tag=stage)
    lp = np.asarray(res.logprobs, dtype=np.float64)
    p = np.exp(lp - lp.max())
    return p / p.sum(), res


def scored_verdict(
    ctx: DefameContext,
    make_prompt: Callable[[str], str],
    content: str,
    labels: list[Label],
    *,
    stage: str,
    round_no: int,
) -> tuple[Label, str, list[dict[str, Any]]] | None:
    """The option the model finds most likely as its reply (``verdict`` likelihood/calibrated), or
    None when the model cannot score (the caller then generates).

    ``make_prompt(content)`` is the answer-only prompt with the record (or claim) in place; for
    "calibrated" the same prompt with each content-free input gives the prompt's own bias.
    """
    from core.llm import ScoringUnsupported

    conts = [f"`{lbl.value}`" for lbl in labels]
    t0 = time.perf_counter()
    try:
        p, res = _option_probs(ctx, make_prompt(content), conts, stage)
    except ScoringUnsupported as e:
        log.warning("verdict=%s needs a model that scores replies (%s); generating instead", ctx.config.verdict, e)
        return None
    q = p
    cf = None
    if ctx.config.verdict == "calibrated":
        prompts = [make_prompt(c) for c in CONTENT_FREE]
        key = (model_name(ctx), *prompts, *conts)
        with _cf_lock:  # claims checked in parallel wait for one estimate instead of each making their own
            key_lock = _cf_locks.setdefault(key, threading.Lock())
        with key_lock:
            cf = _content_free.get(key)
            if cf is None:
                cf = _content_free[key] = np.mean([_option_probs(ctx, pr, conts, stage)[0] for pr in prompts], axis=0)
        q = p / np.maximum(cf, 1e-12)
        q = q / q.sum()
    best = int(np.argmax(q))
    if cf is None:
        detail = " · ".join(f"{lbl.value} {p[i]:.2f}" for i, lbl in enumerate(labels))
        how = "Chosen by likelihood of each option as the reply"
    else:
        detail = " · ".join(f"{lbl.value} {p[i]:.2f} → {q[i]:.2f}" for i, lbl in enumerate(labels))
        how = "Chosen by likelihood of each option as the reply, calibrated against content-free inputs"
    answer = f"`{labels[best].value}`\n\n({how}: {detail}.)"
    entry = {
        "stage": stage,
        "round": round_no,
        "attempt": 1,
        "prompt_tokens": res.prompt_tokens,
        "completion_tokens": 0,
        "latency_s": round(time.perf_counter() - t0, 3),
        "constrained": False,
        "parsed": True,
        "scored": ctx.config.verdict,
        "probs": {lbl.value: round(float(p[i]), 4) for i, lbl in enumerate(labels)},
    }
    if cf is not None:
        entry["calibrated"] = {lbl.value: round(float(q[i]), 4) for i, lbl in enumerate(labels)}
    return labels[best], answer, [entry]


def judge(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: the round's judgement; the router decides whether another round follows."""
    t0 = time.perf_counter()
    ctx = runtime.context
    bench = get_benchmark(ctx.config.benchmark)
    round_no = int(state.get("iteration", 0))
    is_final = round_no >= ctx.config.max_iterations or not state.get("planned")
    labels = bench.allowed_labels(is_final=is_final)
    extra = f"- {bench.extra_judge_rules}\n" if bench.extra_judge_rules else ""
    options = options_text(bench, labels)
    scored = None
    if ctx.config.verdict != "generate":
        scored = scored_verdict(
            ctx,
            lambda rec: fill(JUDGE_SCORED, ctx, record=rec, options=options, extra_rules=extra),
            record_text(state, ctx),
            labels,
            stage="judge",
            round_no=round_no,
        )
    if scored is not None:
        label, answer, calls = scored
    else:
        prompt = fill(JUDGE, ctx, record=record_text(state, ctx), options=options, extra_rules=extra)
        label, answer, calls = judge_with_retries(
            ctx, prompt, labels, stage="judge", round_no=round_no, media=state.get("media")
        )
    out: dict[str, Any] = {"label": label.value, "judge_answer": answer, "final": is_final, "calls": calls}
    if is_final or label != Label.NEI:
        out["final"] = True
        out["record"] = [{"kind": "reasoning", "text": "## Final Judgement\n" + answer.strip()}]
    ctx.emit("judge", round=round_no, label=label.value, final=out["final"])
    out["timings"] = [{"stage": "judge", "round": round_no, "seconds": round(time.perf_counter() - t0, 3)}]
    return out


def baseline_verdict(claim: dict[str, Any], ctx: DefameContext) -> tuple[Label, str, list[dict[str, Any]]]:
    """The no-evidence baseline (the paper's "GPT-4o" row): a verdict from the claim alone, same parsing."""
    from agents.defame.calls import is_text_only
    from agents.defame.document import claim_block

    bench = get_benchmark(ctx.config.benchmark)
    labels = bench.allowed_labels(is_final=True)
    extra = f"- {bench.extra_judge_rules}\n" if bench.extra_judge_rules else ""
    options = options_text(bench, labels)
    claim_text = claim_block(claim, text_only=is_text_only(ctx))
    if ctx.config.verdict != "generate":
        scored = scored_verdict(
            ctx,
            lambda c: BASELINE_SCORED.format(options=options, claim=c, extra_rules=extra),
            claim_text,
            labels,
            stage="baseline",
            round_no=1,
        )
        if scored is not None:
            return scored
    prompt = BASELINE.format(options=options, claim=claim_text, extra_rules=extra)
    media = {str(k): v for k, v in (claim.get("images") or {}).items()}
    return judge_with_retries(ctx, prompt, labels, stage="baseline", round_no=1, media=media)
