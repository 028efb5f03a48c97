"""The agent's reply format and action grammar (spec §3.2), parsed exactly.

A reply must contain ``Thought:`` and ``Action:``; otherwise it is a format error and
the environment answers with a "Format ERROR" observation without touching the
browser. The action (the first line after ``Action:``) is one of::

    Click [n]
    Type [n]; [text]              (clears the box, types, presses ENTER)
    Scroll [n or WINDOW]; [up or down]
    Wait
    GoBack
    Google
    ANSWER; [text]                (terminates the episode)

Keywords are case-insensitive; square brackets are optional (``ANSWER; Paris`` and
``ANSWER; [Paris]`` both answer "Paris").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ACTION_KINDS = ("click", "type", "scroll", "wait", "goback", "google", "answer")

# The constrained-decoding pattern for the local provider (a reply in exactly this shape).
REPLY_REGEX = (
    r"Thought: [^\n]{1,200}\nAction: (Click \[[0-9]{1,3}\]|Type \[[0-9]{1,3}\]; \[[^\]\n]{1,80}\]|"
    r"Scroll \[(WINDOW|[0-9]{1,3})\]; \[(up|down)\]|Wait|GoBack|ANSWER; \[[^\]\n]{1,120}\])"
)

FORMAT_ERROR_MISSING = "Format ERROR: Both 'Thought' and 'Action' should be included in your reply."


@dataclass(frozen=True)
class Action:
    """A parsed action: kind, target element (or None; -1 means WINDOW) and text content."""

    kind: str
    element: int | None = None
    content: str = ""

    def render(self) -> str:
        """The canonical action text (what the policy is trained to emit)."""
        if self.kind == "click":
            return f"Click [{self.element}]"
        if self.kind == "type":
            return f"Type [{self.element}]; [{self.content}]"
        if self.kind == "scroll":
            target = "WINDOW" if self.element in (None, -1) else str(self.element)
            return f"Scroll [{target}]; [{self.content}]"
        if self.kind == "answer":
            return f"ANSWER; [{self.content}]"
        return {"wait": "Wait", "goback": "GoBack", "google": "Google"}[self.kind]


@dataclass(frozen=True)
class FormatError:
    """A reply that cannot be executed; ``message`` is the observation returned to the agent."""

    message: str


@dataclass(frozen=True)
class ParsedReply:
    thought: str
    action_text: str
    action: Action | FormatError


def _strip_brackets(s: str) -> str:
    s = s.strip()
    if s.startswith("[") and s.endswith("]"):
        s = s[1:-1]
    return s.strip()


_NUM = r"\[?\s*(\d+)\s*\]?"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("click", re.compile(rf"^click\s*{_NUM}\s*$", re.I)),
    ("type", re.compile(rf"^type\s*{_NUM}\s*[;,]\s*(.+)$", re.I | re.S)),
    ("scroll", re.compile(r"^scroll\s*\[?\s*(window|\d+)\s*\]?\s*[;,]\s*\[?\s*(up|down)\s*\]?\s*$", re.I)),
    ("wait", re.compile(r"^wait\s*$", re.I)),
    ("goback", re.compile(r"^go\s*back\s*$", re.I)),
    ("google", re.compile(r"^google\s*$", re.I)),
    ("answer", re.compile(r"^answer\s*[;:,]?\s*(.*)$", re.I | re.S)),
]


def parse_action(text: str) -> Action | FormatError:
    """Parse one action string (the text after ``Action:``)."""
    t = text.strip().strip("`").strip()
    for kind, pat in _PATTERNS:
        m = pat.match(t)
        if not m:
            continue
        if kind == "click":
            return Action("click", int(m.group(1)))
        if kind == "type":
            content = _strip_brackets(m.group(2))
            if not content:
                break
            return Action("type", int(m.group(1)), content)
        if kind == "scroll":
            target = m.group(1).lower()
            return Action("scroll", -1 if target == "window" else int(target), m.group(2).lower())
        if kind == "answer":
            content = _strip_brackets(m.group(1))
            if not content:
                break
            return Action("answer", None, content)
        return Action(kind)
    return FormatError(
        f"Format ERROR: invalid action {t[:80]!r}. Use one of: Click [n]; Type [n]; [text]; "
        "Scroll [n or WINDOW]; [up or down]; Wait; GoBack; ANSWER; [text]."
    )


def parse_reply(reply: str) -> ParsedReply:
    """Split a policy reply into thought and action; missing keywords give a format error."""
    text = reply.strip()
    t_pos = re.search(r"thought\s*:", text, re.I)
    a_pos = re.search(r"action\s*:", text, re.I)
    if t_pos is None or a_pos is None or a_pos.start() < t_pos.start():
        return ParsedReply("", "", FormatError(FORMAT_ERROR_MISSING))
    thought = text[t_pos.end() : a_pos.start()].strip()
    rest = text[a_pos.end() :].strip()
    if re.match(r"answer\b", rest, re.I):
        action_text = rest.split("\n\n")[0].strip()  # an answer may span lines
    else:
        action_text = rest.split("\n")[0].strip()
    return ParsedReply(thought, action_text, parse_action(action_text))
