"""Clinical Graph-of-Thoughts as LangGraph ``StateGraph``s (spec §3.2): wiring and compile only.

CGoT (``graph``), the exact DAG of the paper::

    START → N1 ─────────────┬──────────────→ N3 → N4 → END
    START → N2 ─┬→ N2.5 ─┐  │  (N1, N2 → N3; N1, N2, N3 → N4)
                │        └──┴→ N5 → END      (N1, N2, N2.5, N3 → N5)

Direct baseline (``direct_graph``): the same nodes asked each question without knowledge or parent
answers — N1, N2, N3, N4 straight from START; N2.5 and N5 derived from the direct answers as in CGoT.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph

from agents.clinical_got.config import ClinicalGotContext
from agents.clinical_got.nodes import N1, N2, N2_5, N3, N4, N5, llm_node, rare_locations, summary
from agents.clinical_got.state import InputState, State

Mode = Literal["cgot", "direct"]
LLM_NODES = (N1, N2, N3, N4)
NODES = (N1, N2, N2_5, N3, N4, N5)


def build_graph(mode: Mode = "cgot", checkpointer: Any = None):
    """Compile the CGoT graph (``mode="cgot"``) or the direct baseline; pass a checkpointer to make runs resumable."""
    chained = mode == "cgot"
    g = StateGraph(State, input_schema=InputState, context_schema=ClinicalGotContext)
    for node in LLM_NODES:
        g.add_node(node, llm_node(node, chained=chained))
    g.add_node(N2_5, rare_locations)
    g.add_node(N5, summary)
    g.add_edge(START, N1)
    g.add_edge(START, N2)
    g.add_edge(N2, N2_5)
    if chained:
        g.add_edge([N1, N2], N3)
        g.add_edge([N1, N2, N3], N4)
    else:
        g.add_edge(START, N3)
        g.add_edge(START, N4)
    g.add_edge([N1, N2, N2_5, N3], N5)
    g.add_edge(N4, END)
    g.add_edge(N5, END)
    return g.compile(checkpointer=checkpointer, name="clinical_got" if chained else "clinical_got_direct")


graph = build_graph("cgot")
"""The uncheckpointed CGoT graph (``langgraph.json`` points here); runs use :func:`agents.clinical_got.experiment.run_case`."""

direct_graph = build_graph("direct")
