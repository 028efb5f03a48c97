"""The fact-checking document (spec §3.4) and its exports.

:func:`render_record` turns the claim and the record into the Markdown every
prompt shows; :func:`render_document` adds the final judgement, verdict and
justification. Images stay ``<image:k>`` references until an export resolves
them (:func:`resolve_images`): to ``media/<file>`` next to a ``report.md``, or to
artifacts of a job :class:`~core.jobs.Report`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.defame.labels import Label
from agents.defame.parsing import Action
from agents.defame.tools.filters import parse_date

IMAGE_REF = re.compile(r"<image:(\d+)>")
NO_EVIDENCE = "No new evidence found."
TEXT_ONLY_NOTE = " [image not viewable by this model]"


def format_date(value: str | None) -> str | None:
    d = parse_date(value)
    return d.strftime("%B %d, %Y") if d else None


def claim_block(claim: dict[str, Any], *, text_only: bool = False) -> str:
    """``## Claim`` with the quoted text and the metadata lines that are present."""
    text = claim.get("text", "")
    if text_only:
        text = IMAGE_REF.sub(lambda m: m.group(0) + TEXT_ONLY_NOTE, text)
    lines = ["## Claim", f'Claim: "{text}"']
    if claim.get("author"):
        lines.append(f"Author: {claim['author']}")
    date = format_date(claim.get("date"))
    if date:
        lines.append(f"Date: {date}")
    if claim.get("origin"):
        lines.append(f"Origin: {claim['origin']}")
    return "\n".join(lines)


def evidence_markdown(block: dict[str, Any]) -> str:
    """An ``## Evidence`` block: one sub-section per useful evidence, or "No new evidence found."."""
    useful = [e for e in block.get("items", []) if e.get("summary")]
    if not useful:
        return f"## Evidence\n{NO_EVIDENCE}"
    parts = ["## Evidence"]
    for e in useful:
        parts.append(f"### Evidence from `{e['action']['name']}`\n{e['summary']}")
    return "\n".join(parts)


def block_markdown(block: dict[str, Any]) -> str:
    kind = block.get("kind")
    if kind == "reasoning":
        return block["text"]
    if kind == "actions":
        lines = "\n".join(str(Action.from_dict(a)) for a in block["actions"])
        return f"## Actions\n```\n{lines}\n```"
    if kind == "evidence":
        return evidence_markdown(block)
    raise ValueError(f"unknown record block {kind!r}")


def render_record(claim: dict[str, Any], record: list[dict[str, Any]], *, text_only: bool = False) -> str:
    """The claim and the record so far, as the prompts show it."""
    return "\n\n".join([claim_block(claim, text_only=text_only)] + [block_markdown(b) for b in record])


def render_document(state: dict[str, Any]) -> str:
    """The whole fact-checking document of a finished (or interrupted) run (spec §3.4)."""
    parts = [render_record(state["claim"], state.get("record") or [])]
    label = state.get("label")
    if label is not None and (state.get("final") or label != Label.NEI.value):
        parts.append(f"### Verdict: {Label(label).name}")
    if state.get("justification"):
        parts.append(f"### Justification\n{state['justification']}")
    return "\n\n".join(parts)


_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def resolve_images(markdown: str, media: dict[str, str], link: Callable[[str, str], str]) -> str:
    """Show each known image inline (``![image k](link(k, path))``) where it is first mentioned.

    References inside code (the Actions block, inline code) stay as they are; later
    mentions of an image already shown become the plain words "image k".
    """
    shown: set[str] = set()

    def sub(m: re.Match) -> str:
        k = m.group(1)
        if k not in media:
            return m.group(0)
        if k in shown:
            return f"*(image {k})*"
        shown.add(k)
        return f"\n\n![image {k}]({link(k, media[k])})\n\n"

    out, pos = [], 0
    for code in _CODE.finditer(markdown):
        out.append(IMAGE_REF.sub(sub, markdown[pos : code.start()]))
        out.append(code.group(0))
        pos = code.end()
    out.append(IMAGE_REF.sub(sub, markdown[pos:]))
    return "".join(out)


def evidence_list(record: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every evidence item with its action, summary and sources (for cards and JSON)."""
    out = []
    for block in record:
        if block.get("kind") != "evidence":
            continue
        for e in block.get("items", []):
            out.append(
                {
                    "action": str(Action.from_dict(e["action"])),
                    "useful": bool(e.get("summary")),
                    "summary": e.get("summary"),
                    "error": e.get("error"),
                    "sources": [
                        {k: s.get(k) for k in ("url", "title", "date") if s.get(k)} for s in e.get("sources", [])
                    ],
                }
            )
    return out


def stage_usage(calls: list[dict[str, Any]], timings: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per stage: LLM calls, prompt and completion tokens, and seconds (node wall time)."""
    out: dict[str, dict[str, float]] = {}
    for c in calls:
        row = out.setdefault(c["stage"], {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0})
        row["calls"] += 1
        row["prompt_tokens"] += c.get("prompt_tokens", 0)
        row["completion_tokens"] += c.get("completion_tokens", 0)
    for t in timings:
        row = out.setdefault(t["stage"], {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0})
        row["seconds"] = round(row["seconds"] + t["seconds"], 3)
    return out


def export_markdown(state: dict[str, Any], path: str | Path) -> Path:
    """Write ``report.md`` with the images copied into ``media/`` beside it."""
    import shutil

    path = Path(path)
    media_dir = path.parent / "media"
    media = state.get("media") or {}

    def link(k: str, src: str) -> str:
        media_dir.mkdir(parents=True, exist_ok=True)
        dest = media_dir / f"image_{k}{Path(src).suffix.lower() or '.png'}"
        if Path(src).exists() and not dest.exists():
            shutil.copyfile(src, dest)
        return f"media/{dest.name}"

    path.write_text(resolve_images(render_document(state), media, link), encoding="utf-8")
    return path
