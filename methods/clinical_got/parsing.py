"""Answer parsing for the four LLM nodes (spec §6): regexes for each answer format; unparsable ⇒ ``None``.

The reference splits an answer by lines and removes spaces before matching; these regexes
tolerate spaces instead. ``None`` counts as a wrong answer in every metric (missing outcome
answers stay in the denominator).
"""

from __future__ import annotations

import re

from methods.clinical_got.atlas import roi_table

_N1 = re.compile(r"\[ans\]\s*:?\s*level\s*([1-4])\s*,\s*([0-9]*\.?[0-9]+)\s*(%?)", re.I)
_N1_LEVEL = re.compile(r"level\s*([1-4])", re.I)
_ANS = re.compile(r"\[ans\]\s*:?(.*)", re.I | re.S)
_SCORE = re.compile(r"score\s*([0-3])", re.I)
_BINARY = re.compile(r"\[ans\]\s*:?\s*([01])\b", re.I)

#: Constrained-decoding patterns (local models): the strict answer format of each node.
FORMAT_REGEX = {
    "n1": r"\[ans\]: level[1-4], 0\.[0-9]{4}",
    "n2": r"\[ans\]: (none|[0-9]{1,3}(, [0-9]{1,3}){0,14})",
    "n3": r"\[ans\]: Score [0-3]\.",
    "n4": r"\[ans\]: [01]",
}


def parse_grading(text: str) -> tuple[int, float | None] | None:
    """``[ans]: levelK, p`` → (K, p as a fraction 0–1); a level without a number gives (K, None)."""
    m = _N1.search(text or "")
    if m:
        p = float(m.group(2))
        if m.group(3) == "%" or p > 1.0:
            p /= 100.0
        return int(m.group(1)), min(max(p, 0.0), 1.0)
    m = _N1_LEVEL.search(text or "")
    return (int(m.group(1)), None) if m else None


def parse_rois(text: str) -> list[int] | None:
    """ROI ids after ``[ans]:`` (unknown ids dropped, order kept, no repeats); ``[]`` for none, ``None`` if no
    ``[ans]`` at all."""
    m = _ANS.search(text or "")
    if not m:
        return None
    body = m.group(1).splitlines()[0] if m.group(1).strip() else ""
    known = roi_table()
    out: list[int] = []
    for tok in re.findall(r"\d+", body):
        rid = int(tok)
        if rid in known and rid not in out:
            out.append(rid)
    return out


def parse_score(text: str) -> int | None:
    """``Score s`` → s (0–3)."""
    m = _SCORE.search(text or "")
    return int(m.group(1)) if m else None


def parse_outcome(text: str) -> int | None:
    """``[ans]: 1`` (adverse) / ``[ans]: 0`` (normal)."""
    m = _BINARY.search(text or "")
    return int(m.group(1)) if m else None


PARSERS = {"n1": parse_grading, "n2": parse_rois, "n3": parse_score, "n4": parse_outcome}
