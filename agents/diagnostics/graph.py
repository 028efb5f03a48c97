"""``diag_steps``: a graph of ``n`` sleeping steps, the Agent Protocol's counterpart of the ``diag.sleep`` job.

Each step is one node execution (one checkpoint), sleeps ``seconds`` and appends its index to ``done``;
the graph ends after ``n`` steps. A run killed mid-way and resumed from its last checkpoint ends with
``done == [0, 1, …, n - 1]``: a finished step is never run again. Operators use it to check that Agent
Protocol runs reach the workers; the durability tests kill processes under it.
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

STEP = "step"
MAX_STEPS = 200


class StepsInput(TypedDict, total=False):
    """What a run takes: how many steps, and how long each sleeps (seconds)."""

    n: int
    seconds: float


class StepsState(StepsInput, total=False):
    done: Annotated[list[int], operator.add]
    """Indexes of the finished steps (the reducer appends each step's own)."""


def step(state: StepsState) -> dict:
    i = len(state.get("done") or [])
    time.sleep(min(max(float(state.get("seconds", 0.1)), 0.0), 60.0))
    return {"done": [i]}


def after_step(state: StepsState) -> Literal["step", "__end__"]:
    n = min(max(int(state.get("n", 3)), 1), MAX_STEPS)
    return STEP if len(state.get("done") or []) < n else END


def build() -> StateGraph:
    g = StateGraph(StepsState, input_schema=StepsInput)
    g.add_node(STEP, step)
    g.add_edge(START, STEP)
    g.add_conditional_edges(STEP, after_step, [STEP, END])
    return g


graph = build().compile(name="diag_steps")
