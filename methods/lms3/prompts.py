"""The reference prompt strings, byte for byte (spec §3.5), and record ids.

With surviving demonstrations::

    Here are some examples you can refer to.\n\nQ: <demo>\nA: <answer>[\n\nQ: ...]
    \n\n---Now it's your turn!\n- Take a deep breath\n- Think step by step\n- I will tip $200\n\nQ: <test>\nA:

Zero-shot or rejected: ``"Let's think step by step: " + <test> + "\\nA: "``.
"""

from __future__ import annotations

from collections.abc import Sequence

HEADER = "Here are some examples you can refer to."
DEMO_Q = "\n\nQ: "
DEMO_A = "\nA: "
TURN = "\n\n---Now it's your turn!\n- Take a deep breath\n- Think step by step\n- I will tip $200\n\nQ: "
ZERO_SHOT_PREFIX = "Let's think step by step: "
ANSWER_CUE = "\nA: "


def build_prompt(query: str, demos: Sequence[tuple[str, str]]) -> str:
    """The reference prompt for ``query`` with ``demos`` as (problem, answer) pairs, best first.

    No demos (zero-shot, or every pick rejected) gives the zero-shot prompt.
    """
    if not demos:
        return ZERO_SHOT_PREFIX + query + ANSWER_CUE
    parts = [HEADER]
    for problem, answer in demos:
        parts += [DEMO_Q, problem, DEMO_A, answer]
    parts += [TURN, query, ANSWER_CUE]
    return "".join(parts)


def record_id(dataset: str, index: int | str, *, subject: str | None = None, tag: str = "one_shot_lms3") -> str:
    """The reference's output id: ``GSM8K_<i>@…``, ``MAWPS_<i>@…`` or ``<subject>@<file>@…``."""
    if dataset == "gsm8k":
        return f"GSM8K_{index}@{tag}"
    if dataset == "mawps":
        return f"MAWPS_{index}@{tag}"
    if dataset == "math":
        if not subject:
            raise ValueError("a MATH record id needs the subject")
        return f"{subject}@{index}@{tag}"
    raise ValueError(f"unknown dataset {dataset!r}")
