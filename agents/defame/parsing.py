"""Parsing the model's answers: actions from a plan, a verdict from a judgement (spec §3.2, checks 1-3).

* Plan: take the last fenced code block; with none, scan the text for
  ``<action_name>(...)``. Each line is parsed as ``name(args)``; unknown names
  are dropped; at most ``max_actions`` are kept. The text outside code blocks is
  the planner's reasoning.
* Judge: the last inline code span, normalized, matched to an allowed label;
  else a ``**bold**`` span; else any allowed label as a substring of the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.defame.labels import Label, match_label, normalize

_FENCE = re.compile(r"```[^\n`]*\n?(.*?)```", re.DOTALL)
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_CALL = re.compile(r"^\s*([a-z_]+)\((.*)\)\s*$")
_IMAGE_REF = re.compile(r"<image:(\d+)>")


@dataclass(frozen=True)
class Action:
    """One tool call: ``name(argument)``; the argument is a query string or an ``<image:k>`` reference."""

    name: str
    argument: str

    @property
    def image_id(self) -> int | None:
        m = _IMAGE_REF.fullmatch(self.argument.strip())
        return int(m.group(1)) if m else None

    def __str__(self) -> str:
        if self.image_id is not None:
            return f"{self.name}(<image:{self.image_id}>)"
        return f'{self.name}("{self.argument}")'

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "argument": self.argument}

    @classmethod
    def from_dict(cls, d: dict[str, str]) -> Action:
        return cls(name=d["name"], argument=d["argument"])


def code_blocks(text: str) -> list[str]:
    return [m.group(1) for m in _FENCE.finditer(text)]


def last_code_block(text: str) -> str | None:
    blocks = code_blocks(text)
    return blocks[-1] if blocks else None


def strip_code_blocks(text: str) -> str:
    """The text with every fenced code block removed (the planner's reasoning)."""
    return _FENCE.sub("", text).strip()


def parse_action_line(line: str, known: set[str]) -> Action | None:
    """``name("query")`` or ``name(<image:k>)`` with a known name; anything else is None."""
    m = _CALL.match(line.strip().rstrip(";,"))
    if not m or m.group(1) not in known:
        return None
    arg = m.group(2).strip()
    if _IMAGE_REF.fullmatch(arg):
        return Action(m.group(1), arg)
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "\"'":
        arg = arg[1:-1]
    arg = arg.strip().strip("\"'").strip()
    return Action(m.group(1), arg) if arg else None


def parse_actions(text: str, known: set[str], max_actions: int = 5) -> tuple[list[Action], str]:
    """Actions and reasoning from a planner answer (check 1).

    The last code block wins; without one, ``name(...)`` calls are looked for in
    the prose. Unknown names are dropped, then the list is cut to ``max_actions``.
    """
    block = last_code_block(text)
    if block is not None:
        lines = block.splitlines()
    else:
        names = "|".join(sorted((re.escape(n) for n in known), key=len, reverse=True)) or r"(?!)"
        lines = [
            m.group(0) for m in re.finditer(rf"\b(?:{names})\((?:\"[^\"\n]*\"|'[^'\n]*'|<image:\d+>|[^()\n]*)\)", text)
        ]
    actions: list[Action] = []
    for line in lines:
        a = parse_action_line(line, known)
        if a is not None:
            actions.append(a)
    return actions[:max_actions], strip_code_blocks(text)


def extract_verdict(answer: str, allowed: list[Label]) -> Label | None:
    """The label an answer chose (check 3): last inline code span, then bold, then a substring."""
    spans = _INLINE.findall(strip_code_blocks(answer)) or _INLINE.findall(answer)
    if spans:
        hit = match_label(spans[-1], allowed)
        if hit is not None:
            return hit
    for bold in reversed(_BOLD.findall(answer)):
        hit = match_label(bold, allowed)
        if hit is not None:
            return hit
    norm = normalize(answer)
    # Longest label first so that "not enough information" is not read as something shorter.
    for label in sorted(allowed, key=lambda lbl: len(lbl.value), reverse=True):
        if normalize(label.value) and re.search(rf"\b{re.escape(normalize(label.value))}\b", norm):
            return label
    return None
