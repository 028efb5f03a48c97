"""Few-shot prompts of the low/mid levels (spec §3.2): k demonstrations, the 2 048-token rule.

* Demonstrations are drawn at random from the same task file, never the test item (by ``idx``).
* Two-variant tasks mix the demo variants 3:2 or 2:3: a random choice of ``[0,0,0,1,1]`` /
  ``[1,1,1,0,0]``, shuffled, gives each demo's variant (0 = the T variant, 1 = the F variant).
* Demo answers: MCQ ``Answer: X``; SV ``Answer: true/false``; AE ``Answer: yes/no``; MR ``Answer:
  correct`` or ``Answer: incorrect, the correct answer is X``; demos are joined by a blank line and
  the test item ends with ``\\nAnswer:``.
* If the prompt has ``budget`` (2 048) tokens or more, a new sample with one demo fewer is drawn,
  until it fits (the reference's loop).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from methods.llm_eval.tokens import TokenCounter
from methods.medcog.data import Task, variants

K_DEMOS = 5
CONTEXT_BUDGET = 2048
MAX_NEW_TOKENS = 50
STOP = ["\n\nQuestion"]


def answer_text(task: Task, gold) -> str:
    """The gold label written the way a demonstration answers."""
    if task == "MCQ":
        return str(gold)
    if task == "SV":
        return "true" if gold == "T" else "false"
    if task == "AE":
        return "yes" if gold == 1 else "no"
    if task == "MR":
        return "correct" if gold[0] == "T" else f"incorrect, the correct answer is {gold[1]}"
    raise ValueError(f"unknown task {task!r}")


@dataclass(frozen=True)
class Demos:
    """The sampled demonstrations: their idx, variant per demo, and the text block."""

    idx: list[int]
    variant: list[int]
    text: str


def sample_demos(pool: list[tuple], test_idx: int, k: int, task: Task, rng: random.Random) -> Demos:
    """``k`` demonstrations from ``pool`` (a task file) excluding the item whose idx is ``test_idx``."""
    candidates = [it for it in pool if it[0] != test_idx]
    chosen = rng.sample(candidates, k)
    mix = rng.choice([[0, 0, 0, 1, 1], [1, 1, 1, 0, 0]])
    rng.shuffle(mix)
    parts, which = [], []
    for i, item in enumerate(chosen):
        v = 0 if task == "MCQ" else mix[i % len(mix)]
        var = variants(task, item)[v]
        parts.append(var.prompt + "\nAnswer: " + answer_text(task, var.gold) + "\n\n")
        which.append(v)
    return Demos(idx=[it[0] for it in chosen], variant=which, text="".join(parts))


@dataclass(frozen=True)
class FewShotPrompt:
    text: str
    demos: Demos
    n_tokens: int


def build_prompt(
    pool: list[tuple],
    test_idx: int,
    test_prompt: str,
    task: Task,
    *,
    rng: random.Random,
    count: TokenCounter,
    k: int = K_DEMOS,
    budget: int = CONTEXT_BUDGET,
) -> FewShotPrompt:
    """Demonstrations + the test item + ``\\nAnswer:``, with one demo fewer while it has >= ``budget`` tokens."""
    n = k
    while True:
        demos = sample_demos(pool, test_idx, n, task, rng)
        text = demos.text + test_prompt + "\nAnswer:"
        n_tokens = count(text)
        if budget - n_tokens > 0 or n == 0:
            return FewShotPrompt(text=text, demos=demos, n_tokens=n_tokens)
        n -= 1
