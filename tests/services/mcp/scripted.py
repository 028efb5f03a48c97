"""Scripted replies for the MCP tests: an echo for ``llm.complete`` and a short DEFAME run (no search, refuted).

Imported by the tests (same process as the HTTP server) and by ``stdio_server.py`` (the spawned stdio server).
"""

from __future__ import annotations

NAME = "mcp"
MODEL = f"scripted/{NAME}"


def reply(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    if "# Your Actions" in text:  # DEFAME planner: propose nothing, so the judge decides at once
        return "The date is well known; no search is needed."
    if "# Justification" in text:
        return "The Golden Gate Bridge opened in 1937, not 1952."
    if "# Your judgement" in text:
        return "It opened in 1937, so the claim is `refuted`."
    return "echo: " + text[-60:]


def install() -> None:
    from core.llm import gateway
    from core.llm.providers import SCRIPTED

    gateway.ensure_providers()
    SCRIPTED.set_script(NAME, reply)
