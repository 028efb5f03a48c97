"""The interactive-diagnosis simulator (spec §3.4 / §6) as a LangGraph state machine.

intake (the case's opening message) → agent (the model's turn) → environment (parse the reply: action, exam
request, diagnosis; answer with results) → agent … until a diagnosis is given or the turn limit is hit; when the
live conversation exceeds ``budget − 100`` tokens, summarise first and restart from the summary.
The case, model, seed and token counter come from the run context (:class:`agents.medcog.config.SimContext`), so
the same graph runs from the batch job and through the API's Agent Protocol routes (``langgraph.json``), where a
client sets only ``context.config`` (a validated :class:`~agents.medcog.config.SimConfig`).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agents.medcog.config import SimConfig, SimContext
from agents.medcog.state import SimState
from core.llm import complete
from methods.llm_eval.tokens import messages_tokens
from methods.medcog.environment import MAX_TURNS, SUMMARY_PROMPT, respond, start_state, summary_restart

INTAKE, AGENT, ENVIRONMENT, SUMMARISE = "intake", "agent", "environment", "summarise"
REPLY_TOKENS = 100  # the room kept for a reply under the budget (the reference summarises above max − 100)


def _ctx(runtime: Runtime[SimContext] | None) -> SimContext:
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    return ctx if isinstance(ctx, SimContext) else SimContext()


def _call(ctx: SimContext, messages: list[dict[str, str]], turn: int) -> str:
    out = complete(
        messages=messages,
        model=ctx.model,
        temperature=ctx.config.temperature,
        max_tokens=REPLY_TOKENS,
        seed=ctx.config.seed * 1000 + turn,
        tag="medcog.high",
    )
    return out.text


def intake(state: SimState, runtime: Runtime[SimContext]) -> dict[str, Any]:
    """The case's opening turn, unless the input already holds a conversation (a resumed or replayed one)."""
    if state.get("messages"):
        return {}
    first = start_state(_ctx(runtime).the_case())
    return {**first, "transcript": list(first["messages"]), "summaries": 0}


def agent(state: SimState, runtime: Runtime[SimContext]) -> dict[str, Any]:
    turn = state.get("turn", 0) + 1
    reply = _call(_ctx(runtime), state["messages"], turn)
    msg = {"role": "assistant", "content": reply}
    return {
        "messages": state["messages"] + [msg],
        "transcript": state.get("transcript", []) + [msg],
        "last_reply": reply,
        "turn": turn,
    }


def environment(state: SimState, runtime: Runtime[SimContext]) -> dict[str, Any]:
    ctx = _ctx(runtime)
    upd = respond(ctx.the_case(), dict(state), state["last_reply"], ctx.data_dir)
    if "messages" in upd:
        upd["transcript"] = state.get("transcript", []) + [upd["messages"][-1]]
    return upd


def summarise(state: SimState, runtime: Runtime[SimContext]) -> dict[str, Any]:
    ctx = _ctx(runtime)
    reply = _call(ctx, state["messages"] + [{"role": "user", "content": SUMMARY_PROMPT}], state.get("turn", 0))
    messages = summary_restart(ctx.the_case(), dict(state), reply)
    note = {"role": "user", "content": "[summary] " + messages[-1]["content"]}
    return {
        "messages": messages,
        "transcript": state.get("transcript", []) + [note],
        "summaries": state.get("summaries", 0) + 1,
    }


def _over_budget(state: SimState, ctx: SimContext) -> bool:
    return messages_tokens(ctx.counter(), state["messages"]) > ctx.token_budget() - REPLY_TOKENS


def route(state: SimState, runtime: Runtime[SimContext]) -> Literal["agent", "summarise", "__end__"]:
    ctx = _ctx(runtime)
    if state.get("done") or state.get("turn", 0) >= ctx.config.max_turns:
        return END
    if _over_budget(state, ctx):
        return SUMMARISE if state.get("summaries", 0) < 3 else END
    return AGENT


def build() -> StateGraph:
    g = StateGraph(SimState, context_schema=SimContext)
    g.add_node(INTAKE, intake)
    g.add_node(AGENT, agent)
    g.add_node(ENVIRONMENT, environment)
    g.add_node(SUMMARISE, summarise)
    g.add_edge(START, INTAKE)
    g.add_edge(INTAKE, AGENT)
    g.add_edge(AGENT, ENVIRONMENT)
    g.add_conditional_edges(ENVIRONMENT, route, [AGENT, SUMMARISE, END])
    g.add_edge(SUMMARISE, AGENT)
    return g


graph = build().compile(name="medcog")
"""The uncheckpointed simulator (``langgraph.json`` points here); batch runs use :func:`run_episode`."""


def run_episode(
    case, *, model: str, seed: int, count, budget: int, max_turns: int = MAX_TURNS, temperature=0.8, data_dir=None
) -> dict[str, Any]:
    """One case from the start to its diagnosis (or the turn limit); the final state."""
    config = SimConfig(model=model, seed=seed, max_turns=max_turns, temperature=temperature, disease=case.disease)
    ctx = SimContext(config=config, case=case, count=count, budget=budget, data_dir=data_dir)
    return graph.invoke({}, context=ctx, config={"recursion_limit": 4 * max_turns + 20})
