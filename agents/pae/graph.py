"""The PAE loop as a LangGraph graph: propose → SFT start → test → (rollout → evaluate → filter → train → test?)*.

``graph`` (uncompiled checkpointer-free) is what ``langgraph.json`` exposes;
:func:`run` compiles it with :func:`core.checkpoint.checkpointer` (SQLite, or PostgreSQL
when the app database is) keyed by the run id, so an
interrupted run resumes at the node it died in (node side effects are idempotent).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph

from agents.pae.nodes.collect import evaluate, rollout
from agents.pae.nodes.common import load_config
from agents.pae.nodes.learn import filter_node, sft, train
from agents.pae.nodes.propose import propose
from agents.pae.nodes.test import test
from agents.pae.state import InputState, PaeState
from core.checkpoint import checkpointer

log = logging.getLogger(__name__)

PROPOSE, SFT, TEST, ROLLOUT, EVALUATE, FILTER, TRAIN = (
    "propose",
    "sft",
    "test",
    "rollout",
    "evaluate",
    "filter",
    "train",
)


def after_sft(state: PaeState) -> Literal["test", "rollout", "__end__"]:
    cfg = load_config(state["run_id"])
    if cfg.initial_test:
        return TEST
    return ROLLOUT if cfg.iterations > 0 else END


def after_test(state: PaeState) -> Literal["rollout", "__end__"]:
    cfg = load_config(state["run_id"])
    return ROLLOUT if state.get("iteration", 0) < cfg.iterations else END


def after_train(state: PaeState) -> Literal["test", "rollout"]:
    cfg = load_config(state["run_id"])
    it = state.get("iteration", 0)
    return TEST if (it % cfg.eval_every == 0 or it >= cfg.iterations) else ROLLOUT


def build() -> StateGraph:
    g = StateGraph(PaeState, input_schema=InputState)
    g.add_node(PROPOSE, propose)
    g.add_node(SFT, sft)
    g.add_node(TEST, test)
    g.add_node(ROLLOUT, rollout)
    g.add_node(EVALUATE, evaluate)
    g.add_node(FILTER, filter_node)
    g.add_node(TRAIN, train)
    g.add_edge(START, PROPOSE)
    g.add_edge(PROPOSE, SFT)
    g.add_conditional_edges(SFT, after_sft, [TEST, ROLLOUT, END])
    g.add_conditional_edges(TEST, after_test, [ROLLOUT, END])
    g.add_edge(ROLLOUT, EVALUATE)
    g.add_edge(EVALUATE, FILTER)
    g.add_edge(FILTER, TRAIN)
    g.add_conditional_edges(TRAIN, after_train, [TEST, ROLLOUT])
    return g


graph = build().compile()


def run(
    run_id: str,
    *,
    dispatcher: Any = None,
    progress: Any = None,
    recursion_limit: int = 1000,
    device: Any = "cpu",
    amp: str = "off",
    sft_cache: bool = True,
) -> dict[str, Any]:
    """Run (or resume) the PAE run ``run_id`` to its end; returns the final state.

    ``device``/``amp``: where the learner (SFT and PAE updates, LoRA) trains in this process;
    ``sft_cache=False``: train the SFT start even when a cached one fits (and leave the cache alone).
    """
    with checkpointer("pae") as saver:
        app = build().compile(checkpointer=saver)
        cfg = {
            "configurable": {
                "thread_id": f"pae-{run_id}",
                "dispatcher": dispatcher,
                "progress": progress,
                "device": device,
                "amp": amp,
                "sft_cache": sft_cache,
            },
            "recursion_limit": recursion_limit,
        }
        snapshot = app.get_state(cfg)
        if snapshot.next:
            log.info("resuming PAE run %s at %s", run_id, snapshot.next)
            return app.invoke(None, cfg)
        if snapshot.values:
            log.info("PAE run %s already finished", run_id)
            return dict(snapshot.values)
        return app.invoke({"run_id": run_id}, cfg)
