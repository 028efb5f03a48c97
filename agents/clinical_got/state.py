"""The graph's state: the case id in, one answer record per node out (plain JSON, checkpointable).

An answer record is ``{"node", "source" (llm | oracle | derived | template), "prompt", "answer",
"parsed", "seconds"}``; ``prompt`` is the text sent (images shown as ``[image: path]``). Each node
writes only its own key, so parallel nodes (N1 ∥ N2, N2.5 ∥ N3, N4 ∥ N5) never conflict and no
reducer is needed.
"""

from __future__ import annotations

from typing import Any, TypedDict


class InputState(TypedDict):
    """What a caller supplies: a case of the configured benchmark (``case000``…)."""

    case_id: str


class State(InputState, total=False):
    n1: dict[str, Any]  # lesion grading
    n2: dict[str, Any]  # lesion anatomy
    n2_5: dict[str, Any]  # rare locations (derived, no LLM)
    n3: dict[str, Any]  # MRI injury score
    n4: dict[str, Any]  # 2-year outcome
    n5: dict[str, Any]  # MRI interpretation summary (template)
