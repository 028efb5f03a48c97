"""Stage 3, Summarize (spec §3.2, check 5): one summary per source, then a merge.

A source is relevant iff its summary does not contain ``NONE``. With 0
relevant sources the evidence summary is None ("No new evidence found."), with
1 it is that summary, with several a second prompt merges them keeping every
URL as a Markdown link. Tools whose output is already evidence text
(geolocation, OCR, face detection) are not summarised by the LLM.

``summary_prompt="lenient"`` words the same ``NONE`` rule for small models
(:data:`~agents.defame.prompts.SUMMARIZE_SOURCE_LENIENT`); there a summary that opens by saying the source
does not mention or bear on the claim counts as ``NONE`` as well (:func:`states_absence`), since that is how
the 1.5B model says it under the lenient wording. Each summary call's
log entry names its source and whether it was kept, so the evaluation can
report how often a claim's own evidence survives this stage.
"""

from __future__ import annotations

import re
import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, record_text
from agents.defame.config import DefameContext
from agents.defame.document import claim_block
from agents.defame.prompts import MERGE_SUMMARIES, SUMMARIZE_SOURCE, SUMMARIZE_SOURCE_LENIENT
from agents.defame.state import State

#: A first sentence saying the source lacks what the claim is about ("The search result does not mention Sean
#: Connery or Steve Jobs."), with no "but …" turning to what it does say. The verb branch needs the source as
#: its subject and a topical verb: "The vaccine does not contain mercury" or "the article does not support the
#: Claim" are evidence, not absence.
_ABSENCE = re.compile(
    r"\b(?:result|results|source|article|page|text|document|snippet|website|site|passage|post|search|it|this)"
    r"\s+(?:\w+\s+){0,2}?(?:does|do|did|is|are|was|were)(?:\s+not|n't)\s+(?:\w+\s+){0,2}?"
    r"(?:mention|provide|contain|discuss|address|bear|relate|refer|include|give|offer|talk|speak|deal|concern|"
    r"cover|touch|relevant|related|about|specify)"
    r"|\b(?:there\s+is|there's|contains?|provides?|has|gives?|offers?|includes?)\s+(?:no|not\s+any)\s+(?:\w+\s+)?"
    r"(?:information|mention|evidence|details?|data|reference)\b"
    r"|\b(?:unrelated|irrelevant|nothing\s+to\s+do\s+with|something\s+else)\b",
    re.IGNORECASE,
)
_TURN = re.compile(r"\b(?:but|however|although|though|instead|while|whereas|yet)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def states_absence(summary: str) -> bool:
    """Whether a summary opens by saying the source does not bear on the claim (and does not turn to what it
    does say): the lenient summariser's way of writing ``NONE`` (docs/results/defame.md)."""
    first = _SENTENCE_END.split(summary.strip(), maxsplit=1)[0]
    return bool(_ABSENCE.search(first)) and not _TURN.search(first)


def is_relevant(summary: str, *, lenient: bool = False) -> bool:
    """The paper's rule: relevant iff the summary does not contain ``NONE``. Under the lenient prompt a small
    model writes "the source does not mention …" where the paper's prompt would get ``NONE``; those count as
    ``NONE`` too."""
    if not summary.strip() or "NONE" in summary:
        return False
    return not (lenient and states_absence(summary))


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
    lenient = cfg.summary_prompt == "lenient"
    record = record_text(state, ctx)
    useful: list[tuple[dict[str, Any], str]] = []
    for src in result.get("sources") or []:
        prompt = fill(
            SUMMARIZE_SOURCE_LENIENT if lenient else SUMMARIZE_SOURCE,
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
        kept = is_relevant(text, lenient=lenient)
        entry.update(parsed=True, source=src["url"], kept=kept)
        calls.append(entry)
        if kept:
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
