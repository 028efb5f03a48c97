"""Stage 1, Plan (spec §3.2): propose the next actions from the record.

The answer's last code block holds the actions (fallback: ``name(...)`` in the
prose); unknown names are dropped, at most ``max_actions`` kept, actions already
performed removed, a ``<image:k>`` copied from an exemplar replaced by the
claim's first image. Text outside code blocks is reasoning (without lines that
echo the prompt), recorded when longer than 32 characters. An answer with no
parsable action is retried (3 attempts). The planner guard
(:mod:`agents.defame.guard`) rejects search queries that copy a few-shot example
or share no content word with the claim; the retry tells the model which and
why, and when every attempt was rejected one search of the claim's own content
words runs instead (logged as ``guard_fallback``). If every proposal was already
done the planner returns no actions, which forces the final judgement.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.calls import call_llm, fill, plan_regex, record_text
from agents.defame.config import DefameContext
from agents.defame.guard import fallback_query, split_actions, strip_echo
from agents.defame.labels import get_benchmark
from agents.defame.parsing import Action, parse_actions
from agents.defame.prompts import ACTION_ENTRY, DEFAULT_EXAMPLES, EXAMPLE_ENTRY, PLAN, PLAN_RETRY
from agents.defame.state import State
from agents.defame.tools.registry import ActionSpec, available_actions

MIN_REASONING_CHARS = 32


def plan_prompt(state: dict[str, Any], ctx: DefameContext, specs: list[ActionSpec]) -> str:
    bench = get_benchmark(ctx.config.benchmark)
    actions = "\n".join(
        ACTION_ENTRY.format(name=s.name, description=s.description, how_to=s.how_to, format=s.format) for s in specs
    )
    examples = "\n\n".join(
        EXAMPLE_ENTRY.format(claim=c, reasoning=r, action=a)
        for c, r, a in (DEFAULT_EXAMPLES[s.name] for s in specs if s.name in DEFAULT_EXAMPLES)
    )
    extra = f"- {bench.extra_plan_rules}\n" if bench.extra_plan_rules else ""
    return fill(PLAN, ctx, record=record_text(state, ctx), actions=actions, examples=examples, extra_rules=extra)


def dedupe(actions: list[Action], performed: list[dict[str, str]], claim_images: list[str]) -> list[Action]:
    """Drop actions done before (same name and argument) or twice in this answer (check 2)."""
    done = {(a["name"], a["argument"].strip().lower()) for a in performed}
    out: list[Action] = []
    for a in actions:
        if a.image_id is not None and str(a.image_id) not in claim_images and claim_images:
            a = Action(a.name, f"<image:{claim_images[0]}>")  # an exemplar's reference copied literally
        key = (a.name, a.argument.strip().lower())
        if key in done:
            continue
        done.add(key)
        out.append(a)
    return out


def plan(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: one planning step. Returns the round's actions and the new record blocks."""
    t0 = time.perf_counter()
    ctx = runtime.context
    cfg = ctx.config
    round_no = int(state.get("iteration", 0)) + 1
    claim = state["claim"]
    specs = available_actions(claim, ctx, list(state.get("used_limited") or []))
    known = {s.name for s in specs}
    images = sorted((claim.get("images") or {}).keys(), key=int)
    prompt = plan_prompt(state, ctx, specs)
    calls: list[dict[str, Any]] = []
    actions: list[Action] = []
    reasoning = ""
    rejected: list[str] = []
    ask = prompt
    for attempt in range(1, cfg.retries + 1):
        if not specs:
            break
        text, entry = call_llm(
            ctx,
            "plan",
            ask,
            round_no=round_no,
            max_tokens=cfg.budget.plan,
            regex=plan_regex(sorted(known), images, cfg.max_actions),
            attempt=attempt,
        )
        actions, reasoning = parse_actions(text, known, cfg.max_actions)
        entry["parsed"] = bool(actions)  # the answer's format; the guard's verdict is logged beside it
        if cfg.plan_guard and actions:
            actions, why = split_actions(actions, claim.get("text", ""))
            if why:
                entry["rejected"] = why
                rejected += why
                ask = prompt.removesuffix("# Your Actions\n") + PLAN_RETRY.format(reasons="; ".join(why))
        entry["accepted"] = len(actions)
        calls.append(entry)
        if actions:
            break
    if not actions and rejected and "web_search" in known:
        actions = [Action("web_search", fallback_query(claim.get("text", "")))]
        calls[-1]["guard_fallback"] = str(actions[0])
    reasoning = strip_echo(reasoning)
    actions = dedupe(actions, list(state.get("performed") or []), images)
    if not actions:
        reasoning = ""
    record: list[dict[str, Any]] = []
    if len(reasoning) > MIN_REASONING_CHARS:
        record.append({"kind": "reasoning", "text": reasoning})
    if actions:
        record.append({"kind": "actions", "actions": [a.to_dict() for a in actions]})
    ctx.emit("plan", round=round_no, actions=[str(a) for a in actions])
    return {
        "iteration": round_no,
        "planned": [a.to_dict() for a in actions],
        "record": record,
        "calls": calls,
        "results": [],
        "timings": [{"stage": "plan", "round": round_no, "seconds": round(time.perf_counter() - t0, 3)}],
    }
