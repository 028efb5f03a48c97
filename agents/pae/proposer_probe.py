"""How well a model proposes tasks: free text against decoding under the task JSON schema (issue #26).

For each training site the LLM proposer (:class:`agents.pae.proposer.LLMProposer`, the
paper's prompt, T = 1.0, top-p 0.9) is asked for ``tasks`` new tasks ``requests`` times
unconstrained and as many times under the task JSON schema, with the same seeds. Per
reply it counts

* the task-like lines of a free-text reply and how many of them are not well-formed task
  objects (:func:`agents.pae.proposer.format_errors`): the **format-error rate** the schema
  removes (0 by construction under it);
* the **valid new tasks** the proposer's post-processing keeps (known site, sane length,
  not a duplicate of a demo or an earlier task of the reply), out of those asked for.

Rates come with 95% Wilson intervals over lines and over tasks asked; lines of one reply
are not independent, so the intervals are a lower bound on the uncertainty.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from core.stats import wilson

log = logging.getLogger(__name__)

DECODINGS = (("free text", False), ("JSON schema", True))


def probe(
    model: str | None,
    sites: Sequence[str],
    *,
    requests: int = 1,
    tasks: int = 5,
    max_tokens: int = 512,
    seed: int = 0,
    decodings: Sequence[str] = ("free text", "JSON schema"),
    on_reply: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per site, decoding and request (see the module docstring); ``on_reply`` sees each row as it lands."""
    from agents.pae.proposer import LLMProposer, format_errors
    from agents.pae.sites import build_sites

    built = build_sites(seed)
    unknown = [s for s in sites if s not in built]
    if unknown:
        raise ValueError(f"unknown site(s) {unknown}; known: {sorted(built)}")
    chosen = [(d, c) for d, c in DECODINGS if d in decodings]
    if not chosen or len(chosen) != len(set(decodings)):
        raise ValueError(f"decodings must be among {[d for d, _ in DECODINGS]}, got {list(decodings)}")
    if requests < 1 or tasks < 1:
        raise ValueError("requests and tasks must be at least 1")
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(sites):
        for r in range(requests):
            for decoding, constrained in chosen:
                prop = LLMProposer(model=model, max_tokens=max_tokens, constrained=constrained)
                t0 = time.perf_counter()
                got = prop.propose(built[name], tasks, seed=seed + 1000 * r + i)
                raw = prop.raw_replies[-1]
                bad, lines = (0, len(got)) if constrained else format_errors(raw)
                row = {
                    "site": name,
                    "decoding": decoding,
                    "request": r,
                    "asked": tasks,
                    "valid": len(got),
                    "lines": lines,
                    "format_errors": bad,
                    "seconds": round(time.perf_counter() - t0, 1),
                    "example": got[0].question if got else raw.replace("\n", " ")[:160],
                    "reply": raw,
                }
                rows.append(row)
                if on_reply is not None:
                    on_reply(row)
    return rows


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per decoding: replies, task lines, format-error rate and valid-task rate with 95% Wilson intervals."""
    out = []
    for decoding, _ in DECODINGS:
        mine = [r for r in rows if r["decoding"] == decoding]
        if not mine:
            continue
        lines = sum(r["lines"] for r in mine)
        bad = sum(r["format_errors"] for r in mine)
        asked = sum(r["asked"] for r in mine)
        valid = sum(r["valid"] for r in mine)
        out.append(
            {
                "decoding": decoding,
                "replies": len(mine),
                "replies_with_a_valid_task": sum(r["valid"] > 0 for r in mine),
                "lines": lines,
                "format_errors": bad,
                "format_error_rate": bad / lines if lines else None,
                "format_error_ci": wilson(bad, lines) if lines else None,
                "asked": asked,
                "valid": valid,
                "valid_rate": valid / asked,
                "valid_ci": wilson(valid, asked),
                "seconds": round(sum(r["seconds"] for r in mine), 1),
            }
        )
    return out


def table_rows(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """The per-reply rows as table cells (site, decoding, asked, valid, format errors, seconds, example)."""
    return [
        [
            r["site"],
            r["decoding"],
            r["asked"],
            r["valid"],
            f"{r['format_errors']}/{r['lines']}" if r["decoding"] == "free text" else "0 (by construction)",
            r["seconds"],
            r["example"],
        ]
        for r in rows
    ]
