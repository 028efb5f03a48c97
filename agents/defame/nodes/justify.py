"""Stage 6, Justify (spec §3.2): one concise paragraph that justifies the verdict from the record."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, record_text
from agents.defame.config import DefameContext
from agents.defame.guard import strip_echo
from agents.defame.labels import Label
from agents.defame.prompts import JUSTIFY
from agents.defame.state import State


def justify(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: ``report.justification`` (skipped by the router when the verdict is REFUSED)."""
    t0 = time.perf_counter()
    ctx = runtime.context
    round_no = int(state.get("iteration", 0))
    verdict = Label(state["label"]).value
    prompt = fill(JUSTIFY, ctx, record=record_text(state, ctx), verdict=verdict)
    text, entry = call_llm(
        ctx, "justify", prompt, round_no=round_no, max_tokens=ctx.config.budget.justify, media=state.get("media")
    )
    text = strip_echo(text)
    entry["parsed"] = bool(text.strip())
    ctx.emit("justify", round=round_no)
    return {
        "justification": text.strip(),
        "calls": [entry],
        "timings": [{"stage": "justify", "round": round_no, "seconds": round(time.perf_counter() - t0, 3)}],
    }
