"""Stage 4, Develop (spec §3.2): new step-by-step analysis of the claim in light of the evidence.

Stored as a ``## Elaboration`` block after every round that executed actions.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, record_text
from agents.defame.config import DefameContext
from agents.defame.guard import strip_echo
from agents.defame.prompts import DEVELOP
from agents.defame.state import State


def develop(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: append the elaboration."""
    t0 = time.perf_counter()
    ctx = runtime.context
    round_no = int(state.get("iteration", 0))
    if not ctx.config.run_develop:
        return {"timings": [{"stage": "develop", "round": round_no, "seconds": 0.0}]}
    prompt = fill(DEVELOP, ctx, record=record_text(state, ctx))
    text, entry = call_llm(
        ctx, "develop", prompt, round_no=round_no, max_tokens=ctx.config.budget.develop, media=state.get("media")
    )
    text = strip_echo(text)
    entry["parsed"] = True
    ctx.emit("develop", round=round_no)
    return {
        "record": [{"kind": "reasoning", "text": "## Elaboration\n" + text.strip()}],
        "calls": [entry],
        "timings": [{"stage": "develop", "round": round_no, "seconds": round(time.perf_counter() - t0, 3)}],
    }
