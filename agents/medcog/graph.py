"""The interactive-diagnosis simulator (spec §3.4 / §6) as a LangGraph state machine.

agent (the model's turn) → environment (parse the reply: action, exam request, diagnosis; answer
with results) → agent … until a diagnosis is given or the turn limit is hit; when the live
conversation exceeds ``budget − 100`` tokens, summarise first and restart from the summary.
The case, model, seed and token counter travel in ``config["configurable"]``.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.medcog.state import SimState
from core.llm import complete
from methods.llm_eval.tokens import messages_tokens
from methods.medcog.environment import MAX_TURNS, SUMMARY_PROMPT, respond, start_state, summary_restart

AGENT, ENVIRONMENT, SUMMARISE = "agent", "environment", "summarise"
REPLY_TOKENS = 100  # the room kept for a reply under the budget (the reference summarises above max − 100)


def _cfg(config: RunnableConfig) -> dict[str, Any]:
    return config["configurable"]


def _call(cfg: dict[str, Any], messages: list[dict[str, str]], turn: int) -> str:
    out = complete(
        messages=messages,
        model=cfg["model"],
        temperature=cfg.get("temperature", 0.8),
        max_tokens=REPLY_TOKENS,
        seed=cfg["seed"] * 1000 + turn,
        tag="medcog.high",
    )
    return out.text


def agent(state: SimState, config: RunnableConfig) -> dict[str, Any]:
    cfg = _cfg(config)
    turn = state.get("turn", 0) + 1
    reply = _call(cfg, state["messages"], turn)
    msg = {"role": "assistant", "content": reply}
    return {
        "messages": state["messages"] + [msg],
        "transcript": state.get("transcript", []) + [msg],
        "last_reply": reply,
        "turn": turn,
    }


def environment(state: SimState, config: RunnableConfig) -> dict[str, Any]:
    cfg = _cfg(config)
    upd = respond(cfg["case"], dict(state), state["last_reply"], cfg.get("data_dir"))
    if "messages" in upd:
        upd["transcript"] = state.get("transcript", []) + [upd["messages"][-1]]
    return upd


def summarise(state: SimState, config: RunnableConfig) -> dict[str, Any]:
    cfg = _cfg(config)
    reply = _call(cfg, state["messages"] + [{"role": "user", "content": SUMMARY_PROMPT}], state.get("turn", 0))
    messages = summary_restart(cfg["case"], dict(state), reply)
    note = {"role": "user", "content": "[summary] " + messages[-1]["content"]}
    return {
        "messages": messages,
        "transcript": state.get("transcript", []) + [note],
        "summaries": state.get("summaries", 0) + 1,
    }


def _over_budget(state: SimState, cfg: dict[str, Any]) -> bool:
    return messages_tokens(cfg["count"], state["messages"]) > cfg["budget"] - REPLY_TOKENS


def route(state: SimState, config: RunnableConfig) -> Literal["agent", "summarise", "__end__"]:
    cfg = _cfg(config)
    if state.get("done") or state.get("turn", 0) >= cfg.get("max_turns", MAX_TURNS):
        return END
    if _over_budget(state, cfg):
        return SUMMARISE if state.get("summaries", 0) < 3 else END
    return AGENT


def build() -> StateGraph:
    g = StateGraph(SimState)
    g.add_node(AGENT, agent)
    g.add_node(ENVIRONMENT, environment)
    g.add_node(SUMMARISE, summarise)
    g.add_edge(START, AGENT)
    g.add_edge(AGENT, ENVIRONMENT)
    g.add_conditional_edges(ENVIRONMENT, route, [AGENT, SUMMARISE, END])
    g.add_edge(SUMMARISE, AGENT)
    return g


graph = build().compile()


def run_episode(
    case, *, model: str, seed: int, count, budget: int, max_turns: int = MAX_TURNS, temperature=0.8, data_dir=None
) -> dict[str, Any]:
    """One case from the start to its diagnosis (or the turn limit); the final state."""
    state = start_state(case)
    state["transcript"] = list(state["messages"])
    state["summaries"] = 0
    cfg = {
        "case": case,
        "model": model,
        "seed": seed,
        "count": count,
        "budget": budget,
        "max_turns": max_turns,
        "temperature": temperature,
        "data_dir": data_dir,
    }
    return graph.invoke(state, config={"configurable": cfg, "recursion_limit": 4 * max_turns + 20})
