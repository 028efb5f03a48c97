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
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, judge_regex, record_text
from agents.defame.config import DefameContext
from agents.defame.guard import strip_echo
from agents.defame.labels import Benchmark, Label, get_benchmark
from agents.defame.parsing import extract_verdict
from agents.defame.prompts import BASELINE, JUDGE, JUDGE_REMINDER
from agents.defame.state import State


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


def judge(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: the round's judgement; the router decides whether another round follows."""
    t0 = time.perf_counter()
    ctx = runtime.context
    bench = get_benchmark(ctx.config.benchmark)
    round_no = int(state.get("iteration", 0))
    is_final = round_no >= ctx.config.max_iterations or not state.get("planned")
    labels = bench.allowed_labels(is_final=is_final)
    extra = f"- {bench.extra_judge_rules}\n" if bench.extra_judge_rules else ""
    prompt = fill(JUDGE, ctx, record=record_text(state, ctx), options=options_text(bench, labels), extra_rules=extra)
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
    from agents.defame.report import claim_block

    bench = get_benchmark(ctx.config.benchmark)
    labels = bench.allowed_labels(is_final=True)
    extra = f"- {bench.extra_judge_rules}\n" if bench.extra_judge_rules else ""
    prompt = BASELINE.format(
        options=options_text(bench, labels), claim=claim_block(claim, text_only=is_text_only(ctx)), extra_rules=extra
    )
    media = {str(k): v for k, v in (claim.get("images") or {}).items()}
    return judge_with_retries(ctx, prompt, labels, stage="baseline", round_no=1, media=media)
