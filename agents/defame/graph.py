"""The DEFAME loop as a LangGraph ``StateGraph`` (spec §3.2, §6): wiring and compile only.

::

    START → plan ─(actions)→ execute → summarize → develop → judge ─(NEI, not final)→ plan
              └─(no actions)──────────────────────────────→ judge ─(REFUSED)→ END
                                                            judge ─(else)→ justify → END

The judge is final in the last round or when the planner returned nothing new;
only a non-final judgement may answer "not enough information" and loop.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph

from agents.defame.config import DefameContext
from agents.defame.labels import Label
from agents.defame.nodes.develop import develop
from agents.defame.nodes.execute import execute
from agents.defame.nodes.judge import judge
from agents.defame.nodes.justify import justify
from agents.defame.nodes.plan import plan
from agents.defame.nodes.summarize import summarize
from agents.defame.state import InputState, State

PLAN, EXECUTE, SUMMARIZE, DEVELOP, JUDGE, JUSTIFY = "plan", "execute", "summarize", "develop", "judge", "justify"
STAGES = (PLAN, EXECUTE, SUMMARIZE, DEVELOP, JUDGE, JUSTIFY)


def after_plan(state: State) -> Literal["execute", "judge"]:
    """Actions → execute them; none → the (final) judgement."""
    return EXECUTE if state.get("planned") else JUDGE


def after_judge(state: State) -> Literal["plan", "justify", "__end__"]:
    """NEI in a non-final judgement → another round; REFUSED → end; any other verdict → justify."""
    label = state.get("label")
    if label == Label.NEI.value and not state.get("final"):
        return PLAN
    if label == Label.REFUSED.value:
        return END
    return JUSTIFY


def build_graph(checkpointer: Any = None):
    """Compile the fact-checker; pass a checkpointer to make runs resumable."""
    g = StateGraph(State, input_schema=InputState, context_schema=DefameContext)
    g.add_node(PLAN, plan)
    g.add_node(EXECUTE, execute)
    g.add_node(SUMMARIZE, summarize)
    g.add_node(DEVELOP, develop)
    g.add_node(JUDGE, judge)
    g.add_node(JUSTIFY, justify)
    g.add_edge(START, PLAN)
    g.add_conditional_edges(PLAN, after_plan, [EXECUTE, JUDGE])
    g.add_edge(EXECUTE, SUMMARIZE)
    g.add_edge(SUMMARIZE, DEVELOP)
    g.add_edge(DEVELOP, JUDGE)
    g.add_conditional_edges(JUDGE, after_judge, [PLAN, JUSTIFY, END])
    g.add_edge(JUSTIFY, END)
    return g.compile(checkpointer=checkpointer, name="defame")


graph = build_graph()
"""The uncheckpointed graph (``langgraph.json`` points here); runs use :func:`agents.defame.experiment.check_claim`."""
