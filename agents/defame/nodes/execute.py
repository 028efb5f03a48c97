"""Stage 2, Execute (spec §3.2): run each planned action with the tool that owns it, one after another.

URLs returned for this claim are remembered, so a later search never returns
them again; limited actions are marked used; images returned by tools join the
media registry as new ``<image:k>`` ids.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agents.defame.config import DefameContext
from agents.defame.parsing import Action
from agents.defame.state import State
from agents.defame.tools.registry import TOOLS, run_action


def execute(state: State, runtime: Runtime[DefameContext]) -> dict[str, Any]:
    """Node: raw results for every planned action (summaries come next)."""
    t0 = time.perf_counter()
    ctx = runtime.context
    claim = state["claim"]
    media = dict(state.get("media") or {})
    for k, path in (claim.get("images") or {}).items():
        media.setdefault(str(k), path)
    seen = set(state.get("seen_urls") or [])
    used = list(state.get("used_limited") or [])
    new_media: dict[str, str] = {}
    results = []
    for d in state.get("planned") or []:
        action = Action.from_dict(d)
        res = run_action(action, claim, media, ctx, seen)
        for src in res["sources"]:
            seen.add(src["url"])
            if src.get("image"):
                k = str(max([int(x) for x in media] + [0]) + 1)
                media[k] = new_media[k] = src["image"]
                src["text"] = f"<image:{k}> {src.get('text', '')}".strip()
        if TOOLS[action.name].is_limited and action.name not in used:
            used.append(action.name)
        results.append(res)
    ctx.emit(
        "execute", round=state.get("iteration"), results=len(results), sources=sum(len(r["sources"]) for r in results)
    )
    performed = list(state.get("performed") or []) + list(state.get("planned") or [])
    return {
        "results": results,
        "seen_urls": sorted(seen),
        "used_limited": used,
        "performed": performed,
        "media": {**{str(k): v for k, v in (claim.get("images") or {}).items()}, **new_media},
        "timings": [
            {"stage": "execute", "round": state.get("iteration"), "seconds": round(time.perf_counter() - t0, 3)}
        ],
    }
