"""The sites' oracle: grade a final answer against a WebArena-style string-match reference.

Reference kinds (all present kinds must pass; scores multiply, as in WebArena's
``StringEvaluator``):

* ``exact_match`` (str): the cleaned answer equals the cleaned reference.
* ``must_include`` (list): every item is contained in the cleaned answer; a single
  one-word item must appear as a whole token (WebArena tokenises that case).
* ``fuzzy_match`` (list or "N/A"): WebArena asks an LLM "semantically equivalent?".
  Offline we use a deterministic approximation: "N/A" (or a negative reference such as
  "There is no airport ...") needs an answer that reports impossibility; otherwise every
  duration (minutes), distance (metres) and plain number of each item must occur in
  the answer, and items without numbers need 60% of their content words.
* ``one_of`` (list, ours): any item contained (e.g. "give a synonym").

No answer (the agent never issued ANSWER) scores 0.
"""

from __future__ import annotations

import re
from typing import Any

_STOP = {"the", "a", "an", "is", "are", "of", "to", "in", "on", "at", "and", "or", "order", "it", "from"}
_NEG = re.compile(r"\b(n/?a|none|no|not|cannot|can't|isn't|there is no|unavailable|impossible|doesn't)\b")


def clean(text: Any) -> str:
    t = str(text).strip().lower()
    t = re.sub(r"\s+", " ", t)
    return t.strip(" .\"'`")


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[.'-][a-z0-9]+)*", clean(text))


def exact_match(ref: str, answer: str) -> bool:
    return clean(ref) == clean(answer)


def must_include(refs: list[str], answer: str) -> bool:
    a = clean(answer)
    if len(refs) == 1 and len(_tokens(refs[0])) == 1:
        return _tokens(refs[0])[0] in _tokens(answer)
    return all(clean(r) in a for r in refs)


_DUR = re.compile(
    r"(less than\s*|<\s*)?(\d+)\s*(?:h|hours?|hrs?)\s*(?:(\d+)\s*(?:m|mins?|minutes?))?"
    r"|(less than\s*|<\s*)?(\d+)\s*(?:mins?|minutes?)\b|(\d+):(\d\d)\b"
)
_DIST = re.compile(r"(\d+(?:\.\d+)?)\s*(km|m)\b")
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def durations(text: str) -> list[str]:
    """Durations in minutes as strings; "<1" for "less than 1 minute"."""
    out = []
    for m in _DUR.finditer(clean(text)):
        if m.group(2):
            mins = int(m.group(2)) * 60 + int(m.group(3) or 0)
            out.append(f"<{mins}" if m.group(1) else str(mins))
        elif m.group(5):
            out.append(f"<{m.group(5)}" if m.group(4) else m.group(5))
        else:
            out.append(str(int(m.group(6)) * 60 + int(m.group(7))))
    return out


def distances(text: str) -> list[float]:
    return [float(v) * (1000 if unit == "km" else 1) for v, unit in _DIST.findall(clean(text))]


def _fuzzy_item(ref: str, answer: str) -> bool:
    r = clean(ref)
    if r in ("n/a", "na") or r.startswith(("there is no", "there are no", "no ")):
        return bool(_NEG.search(clean(answer)))
    ref_d, ans_d = durations(r), durations(answer)
    ref_m, ans_m = distances(re.sub(_DUR, " ", r)), distances(answer)
    if ref_d or ref_m:
        return all(d in ans_d for d in ref_d) and all(any(abs(x - y) <= 0.01 * max(x, 1) for y in ans_m) for x in ref_m)
    nums = _NUM.findall(r)
    if nums:
        return all(n in _NUM.findall(clean(answer)) for n in nums)
    words = [w for w in _tokens(r) if w not in _STOP]
    if not words:
        return clean(answer) == r
    have = set(_tokens(answer))
    return sum(w in have for w in words) / len(words) >= 0.6


def fuzzy_match(refs: list[str] | str, answer: str) -> bool:
    items = [refs] if isinstance(refs, str) else list(refs)
    return all(_fuzzy_item(r, answer) for r in items)


def one_of(refs: list[str], answer: str) -> bool:
    a = clean(answer)
    return any(clean(r) in a for r in refs)


def grade(reference: dict[str, Any], answer: str | None) -> float:
    """1.0 when ``answer`` satisfies every kind in ``reference`` else 0.0 (None → 0)."""
    if answer is None or not reference:
        return 0.0
    checks = {"exact_match": exact_match, "must_include": must_include, "fuzzy_match": fuzzy_match, "one_of": one_of}
    score = 1.0
    for kind, ref in reference.items():
        fn = checks.get(kind)
        if fn is None:
            raise ValueError(f"unknown reference kind {kind!r}")
        score *= 1.0 if fn(ref, answer) else 0.0
    return score
