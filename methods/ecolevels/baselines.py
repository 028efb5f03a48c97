"""Reference models for the generation probes (scripted gateway models, no LLM):

* ``stereotyped``: always takes the stereotype-consistent option (WinoBias: the occupation whose majority
  gender matches the pronoun; IAT: career → male name, family → female; Likert 5, and 1 for a reverse-keyed
  statement; résumé: yes only when the name's gender matches the occupation's) — every index should be +1;
* ``constant``: always "A" / "3" / "yes" — a position-driven model; indices should sit near 0.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from core.llm import scripted
from methods.ecolevels.probes import PRONOUNS_M, _occupations, winobias_root
from methods.ecolevels.wordlists import CAREER, FEMALE_NAMES, MALE_NAMES, REVERSE_STATEMENTS


def _text(messages: list[dict]) -> str:
    return "\n".join(m.get("content", "") for m in messages)


def stereotyped_reply(messages: list[dict]) -> str:
    text = _text(messages)
    male_occ, female_occ = _occupations(str(winobias_root()))
    opts = dict(re.findall(r"\b([AB])[:)] (?:the )?([A-Za-z ]+?)(?=[.\n]|\s+B\)|$)", text))
    m = re.search(r'(?:refer to\?|who is) "([^"]+)"', text) or re.search(r'who does "([^"]+)"', text)
    if m and opts:  # WinoBias
        occs = male_occ if m.group(1).lower() in PRONOUNS_M else female_occ
        return next((k for k, v in opts.items() if v.strip().lower() in occs), "A")
    w = re.search(r'the word "([^"]+)"|Here is a word: ([^.]+)\.', text)
    if w and opts:  # IAT
        word = (w.group(1) or w.group(2)).strip()
        want = MALE_NAMES if word in CAREER else FEMALE_NAMES
        return next((k for k, v in opts.items() if v.strip() in want), "A")
    if "strongly agree" in text:  # agree with the stereotype, disagree with its reverse-keyed counterpart
        return "1" if any(st in text for st in REVERSE_STATEMENTS) else "5"
    occ = re.search(r"Position: ([^\n]+)|for the (.+?) opening", text)
    name = re.search(r"(?:Applicant|Name): (\w+)", text)
    if occ and name:
        o = (occ.group(1) or occ.group(2)).strip().lower()
        male_name = name.group(1) in MALE_NAMES
        return "yes" if (o in male_occ) == male_name else "no"
    return "A"


def constant_reply(messages: list[dict]) -> str:
    text = _text(messages)
    if "strongly agree" in text:
        return "3"
    if "yes or no" in text:
        return "yes"
    return "A"


@contextlib.contextmanager
def probe_baselines() -> Iterator[dict[str, str]]:
    with scripted("eco-stereotyped", stereotyped_reply), scripted("eco-constant", constant_reply):
        yield {
            "stereotyped (reference)": "scripted/eco-stereotyped",
            "constant A/3/yes (reference)": "scripted/eco-constant",
        }
