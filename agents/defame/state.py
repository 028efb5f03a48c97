"""The graph's state: the claim, the fact-checking record and the loop's bookkeeping (spec §3.1, §6).

Everything here is plain JSON (dicts, lists, strings) so the LangGraph
checkpointer can store it and a killed run resumes from its last finished stage.

Record blocks (the fact-checking document, in order):

* ``{"kind": "reasoning", "text": str}`` — planner reasoning, ``## Elaboration``
  and ``## Final Judgement`` blocks;
* ``{"kind": "actions", "actions": [{"name", "argument"}]}``;
* ``{"kind": "evidence", "items": [Evidence]}`` where an Evidence is
  ``{"action": {...}, "summary": str | None, "sources": [Source], "text": str}``
  and a Source is ``{"url", "title", "date", "text", "image"?}``.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: later keys win (the media registry grows as tools return images)."""
    out = dict(left or {})
    out.update(right or {})
    return out


class Claim(TypedDict, total=False):
    """A claim: text with ``<image:k>`` references and optional metadata."""

    text: str
    images: dict[str, str]  # image id (as a string) -> file path
    date: str | None  # ISO date YYYY-MM-DD
    author: str | None
    origin: str | None
    claim_id: str | None  # restricts the corpus search to this claim's documents (AVeriTeC semantics)


class InputState(TypedDict):
    """What a caller supplies."""

    claim: Claim


class State(InputState, total=False):
    """The whole run.

    ``record``, ``calls`` and ``timings`` are append-only (reducer ``operator.add``):
    a node returns only its new items. ``media`` merges by key. Every other field
    is overwritten by the node that returns it.
    """

    record: Annotated[list[dict[str, Any]], operator.add]
    calls: Annotated[list[dict[str, Any]], operator.add]  # one entry per LLM call: stage, tokens, parsed...
    timings: Annotated[list[dict[str, Any]], operator.add]  # {"stage", "round", "seconds"}
    media: Annotated[dict[str, str], merge_dicts]
    iteration: int  # rounds started so far
    planned: list[dict[str, str]]  # this round's actions
    results: list[dict[str, Any]]  # this round's raw tool results, one per planned action
    performed: list[dict[str, str]]  # every action executed so far
    used_limited: list[str]  # limited actions already used (they leave the valid list)
    seen_urls: list[str]  # sources already returned for this claim
    label: str | None  # the last judgement's label
    judge_answer: str  # the raw text of the last judgement
    final: bool  # whether the last judgement was final
    justification: str


class Output(TypedDict, total=False):
    """What a finished run hands back (a subset of :class:`State`)."""

    label: str
    justification: str
    record: list[dict[str, Any]]
