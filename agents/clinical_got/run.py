"""Run (or resume) the graph on one case, checkpointed, and turn the final state into a scored row.

:func:`run_case` is what the jobs, the API, the CLI and the reproducer call. The thread id is a hash
of the case, the graph mode and the configuration, so re-running after a crash resumes from the last
finished node, and re-running a finished case returns the stored state without new LLM calls.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from agents.clinical_got.config import ClinicalGotConfig, ClinicalGotContext
from agents.clinical_got.graph import NODES, Mode, build_graph

log = logging.getLogger(__name__)
CHECKPOINTS = "clinical_got"


def thread_id(case_id: str, mode: Mode, config: ClinicalGotConfig, salt: str = "") -> str:
    blob = json.dumps([case_id, mode, config.model_dump(mode="json"), salt], sort_keys=True)
    return f"clinical_got:{mode}:{case_id}:{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


def run_case(
    case_id: str,
    config: ClinicalGotConfig | None = None,
    *,
    mode: Mode = "cgot",
    checkpoint: bool = True,
    salt: str = "",
    on_event=None,
) -> dict[str, Any]:
    """The graph's final state for ``case_id`` (``{"case_id", "n1", …, "n5"}``)."""
    config = config or ClinicalGotConfig()
    ctx = ClinicalGotContext(config=config, on_event=on_event)
    inputs = {"case_id": case_id}
    if not checkpoint:
        return dict(build_graph(mode).invoke(inputs, context=ctx))
    from core.checkpoint import checkpointer

    tid = thread_id(case_id, mode, config, salt)
    with checkpointer(CHECKPOINTS) as saver:
        g = build_graph(mode, checkpointer=saver)
        cfg = {"configurable": {"thread_id": tid}}
        snap = g.get_state(cfg)
        if snap.values and not snap.next and all(n in snap.values for n in NODES):
            return dict(snap.values)  # finished before: no new calls
        resume = bool(snap.values) and bool(snap.next)
        if resume:
            log.info("resuming %s at %s", tid, list(snap.next))
        return dict(g.invoke(None if resume else inputs, cfg, context=ctx))


def scored_row(state: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    """A row for :func:`methods.clinical_got.evaluate.task_metrics`."""
    parsed = {n: (state.get(n) or {}).get("parsed") for n in ("n1", "n2", "n2_5", "n3", "n4")}
    return {
        "case_id": state["case_id"],
        "truth": truth,
        "parsed": parsed,
        "caption": (state.get("n5") or {}).get("answer", ""),
        "answers": {n: state.get(n) or {} for n in NODES},
    }
