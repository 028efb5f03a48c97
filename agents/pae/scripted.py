"""A scripted oracle policy: follows a template task's plan, grounding each step on the labelled page.

It plays the role of the paper's stronger zero-shot agent (Claude) whose trajectories
seed the SFT policy, and it drives the integration tests. It emits replies in the
exact Thought/Action format, so its trajectories train the text policy directly.
"""

from __future__ import annotations

from agents.pae.env import Observation
from agents.pae.sites.base import SiteTask
from agents.pae.som import Element


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def find_element(elements: list[Element], hint: str, *, want_input: bool) -> Element | None:
    """The element whose label equals ``hint`` (else contains it), inputs or clickables as asked."""
    h = _norm(hint)
    pool = [e for e in elements if (e.tag in ("input", "textarea")) == want_input]
    for e in pool:
        if _norm(e.label) == h:
            return e
    for e in pool:
        if h and h in _norm(e.label):
            return e
    return None


class ScriptedPolicy:
    """Replays ``task.plan``; one plan step per environment step."""

    name = "scripted-oracle"

    def __init__(self, task: SiteTask) -> None:
        self.task = task
        self.i = 0

    def act(self, task: str, obs: Observation, history: str = "") -> str:  # noqa: ARG002 - the LLM policy's signature
        if self.i >= len(self.task.plan):
            return "Thought: I could not finish the plan.\nAction: ANSWER; [N/A]"
        kind, hint, text = self.task.plan[self.i]
        if kind == "answer":
            self.i += 1
            return f"Thought: The page shows it.\nAction: ANSWER; [{text}]"
        el = find_element(obs.elements, hint, want_input=kind == "type")
        if el is None:  # not in the viewport: scroll and retry this plan step
            return "Thought: Scroll to find it.\nAction: Scroll [WINDOW]; [down]"
        self.i += 1
        if kind == "type":
            return f"Thought: Type '{text}'.\nAction: Type [{el.index}]; [{text}]"
        return f"Thought: Open '{el.label}'.\nAction: Click [{el.index}]"
