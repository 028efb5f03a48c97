"""Stage 3, Summarize (spec §3.2, check 5): one summary per source, then a merge.

A source is relevant iff its summary does not contain ``NONE``. With 0
relevant sources the evidence summary is None ("No new evidence found."), with
1 it is that summary, with several a second prompt merges them keeping every
URL as a Markdown link. Tools whose output is already evidence text
(geolocation, OCR, face detection) are not summarised by the LLM.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, record_text
from agents.defame.config import DefameContext
from agents.defame.prompts import MERGE_SUMMARIES, SUMMARIZE_SOURCE
from agents.defame.report import claim_block
from agents.defame.state import State


def is_relevant(summary: str) -> bool:
    return bool(summary.strip()) and "NONE" not in summary


def summarize_result(
    result: dict[str, Any], state: dict[str, Any], ctx: DefameContext, round_no: int
) -> tuple[str | None, list[dict[str, Any]]]:
    """The evidence summary of one action's result and the LLM calls it took."""
    calls: list[dict[str, Any]] = []
    if result.get("error"):
        return None, calls
    if not result.get("summarise", True):
        return (result.get("text") or None), calls
    cfg = ctx.config
    record = record_text(state, ctx)
    useful: list[tuple[dict[str, Any], str]] = []
    for src in result.get("sources") or []:
        prompt = fill(
            SUMMARIZE_SOURCE,
            ctx,
            record=record,
            url=src["url"],
            title=src.get("title") or "",
            date=src.get("date") or "unknown",
            text=(src.get("text") or "")[: cfg.max_source_chars],
        )
        text, entry = call_llm(
            ctx, "summarize", prompt, round_no=round_no, max_tokens=cfg.budget.summarize, media=state.get("media")
        )
        text = text.strip()
        entry["parsed"] = True
        calls.append(entry)
        if is_relevant(text):
            useful.append((src, text))
    if not useful:
        return None, calls
    if len(useful) == 1:
        src, text = useful[0]
        return _with_link(text, src), calls
    summaries = "\n\n".join(f"[Source]({s['url']}): {t}" for s, t in useful)
    prompt = fill(MERGE_SUMMARIES, ctx, claim=claim_block(state["claim"]), summaries=summaries)
    merged, entry = call_llm(
        ctx, "merge", prompt, round_no=round_no, max_tokens=cfg.budget.merge, media=state.get("media")
    )
    entry["parsed"] = True
    calls.append(entry)
    merged = merged.strip()
    # A merge that lost the links would make the evidence unverifiable: keep the sources listed.
    missing = [s["url"] for s, _ in useful if s["url"] not in merged]
    if missing:
        merged += "\n\nSources: " + ", ".join(f"[Source]({u})" for u in missing)
    return merged, calls


def _with_link(text: str, src: dict[str, Any]) -> str:
    return text if src["url"] in text else f"{text} ([Source]({src['url']}))"


def summarize(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: the round's evidence block (added even when nothing was useful)."""
    t0 = time.perf_counter()
    ctx = runtime.context
    round_no = int(state.get("iteration", 0))
    items, calls = [], []
    for result in state.get("results") or []:
        summary, c = summarize_result(result, state, ctx, round_no)
        calls += c
        items.append(
            {
                "action": result["action"],
                "summary": summary,
                "sources": result.get("sources") or [],
                "text": result.get("text") or "",
                "error": result.get("error"),
            }
        )
    ctx.emit("summarize", round=round_no, useful=sum(1 for i in items if i["summary"]), total=len(items))
    return {
        "record": [{"kind": "evidence", "items": items}],
        "calls": calls,
        "results": [],
        "timings": [{"stage": "summarize", "round": round_no, "seconds": round(time.perf_counter() - t0, 3)}],
    }
