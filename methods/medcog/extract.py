"""Answer extraction (spec §3.3), rule for rule as the reference scorers do it.

Unparsable MCQ/AE/MR outputs are padded with a random guess from the ``rng`` the caller passes
(a fixed seed per run), as the reference does; an unparsable SV output counts as wrong (``None``).
"""

from __future__ import annotations

import random
import re

LETTERS = ("A", "B", "C", "D", "E")  # the reference pads with A-E for both datasets

_MCQ_PATTERNS = [
    r"^\s*Option\s*([A-E])",
    r"^\s*([A-E])\s*\Z",
    r"^\s*([A-E])\s+",
    r"^\s*([A-E])(?:,|:|\n|\)|\.)",
    r"^\s*\"([A-E])\"",
    r"Answers?:\s*([A-E])",
    r"The correct answer (?:for .*? )?is:?\s*([A-E])",
    r"^Option ([A-E]) is the correct answer",
]
_OPTION = re.compile(r"([A-E]): (.*?)(?:\t|\Z)")


def options_of(prompt: str) -> dict[str, str]:
    """Option text → letter, from ``Options: A: ...\\tB: ...`` in a prompt."""
    return {text: letter for letter, text in _OPTION.findall(prompt) if text}


def extract_mcq(output: str, options: dict[str, str], rng: random.Random) -> str:
    """The option letter: option texts are replaced by their letters, then the first matching pattern;
    only the text before the first blank line counts; a random letter when nothing matches."""
    if not output:
        return ""
    for text, letter in options.items():
        if text in output:
            output = output.replace(text, letter)
    output = output.strip()
    if "\n\n" in output:
        output = output.split("\n\n")[0]
    if not output:
        return rng.choice(LETTERS)
    for p in _MCQ_PATTERNS:
        found = re.findall(p, output, re.DOTALL)
        if found:
            return found[0]
    return rng.choice(LETTERS)


def extract_sv(output: str) -> str | None:
    """``"T"``/``"F"``: a leading true/false, else negative keywords, else positive ones; else ``None``."""
    if not output:
        return None
    clean = output.strip().lower()
    if clean.startswith("true"):
        return "T"
    if clean.startswith("false"):
        return "F"
    for word in ("incorrect", "not correct", "false", "False", "No", "wrong"):
        if word in output:
            return "F"
    for word in ("true", "correct", "consistent", "True", "Yes"):
        if word in output:
            return "T"
    return None


def extract_ae(output: str, rng: random.Random) -> int:
    """1 (yes: the answer is among the options) / 0: a leading yes/no, else ``answer: yes|no``, else random."""
    clean = output.strip().lower()
    if clean.startswith("yes"):
        return 1
    if clean.startswith("no"):
        return 0
    found = re.findall(r"answer: (yes|no)", clean)
    if found:
        return 1 if found[0] == "yes" else 0
    return rng.choice([0, 1])


def extract_mr(output: str, alice: str, rng: random.Random) -> tuple[str, str | None]:
    """``("T", None)`` for "correct", ``("F", letter)`` for "incorrect, the correct answer is X";
    anything else is padded: a random verdict, and for "F" a random letter other than Alice's."""
    text = output.strip()
    found = re.findall(r"answer: (correct|incorrect, the correct answer is [A-E])", text, re.IGNORECASE)
    if found:
        text = found[0]
    if text.startswith("correct"):
        return ("T", None)
    m = re.search(r"^incorrect, the correct answer is ([A-E])", text)
    if m:
        return ("F", m[1])
    verdict = rng.choice(["T", "F"])
    if verdict == "T":
        return ("T", alice)
    return ("F", rng.choice(sorted(set(LETTERS) - {alice})))


def alice_answer(prompt: str) -> str:
    m = re.search(r"Alice's answer: ([A-E])", prompt)
    return m[1] if m else ""


def parsable(task: str, output: str) -> bool:
    """Whether an output is read by the rules rather than padded with a random guess (SV: counted wrong)."""
    text = output.strip()
    if task == "MCQ":
        first = text.split("\n\n")[0] if text else ""
        return bool(first) and any(re.findall(p, first, re.DOTALL) for p in _MCQ_PATTERNS)
    if task == "SV":
        return extract_sv(output) is not None
    if task == "AE":
        low = text.lower()
        return low.startswith(("yes", "no")) or bool(re.findall(r"answer: (yes|no)", low))
    found = re.findall(r"answer: (correct|incorrect, the correct answer is [A-E])", text, re.IGNORECASE)
    head = found[0] if found else text
    return head.startswith("correct") or bool(re.search(r"^incorrect, the correct answer is ([A-E])", head))
