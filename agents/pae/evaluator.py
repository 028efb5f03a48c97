"""Rewards (spec §3.3): the LLM judge, the sites' oracle, a random-reward ablation, and their agreement.

The judge sees only the task, the final ANSWER text and the last 3 states (screenshots
for a vision model; otherwise each state's URL, page text and its whole table of
numbered elements). It may think before its verdict (``judge_max_tokens``, ≥ 256 by
default); a reply with neither "SUCCESS" nor "NOT SUCCESS" is unparsable and asked
again (``judge_retries``; still unparsable counts as 0, flagged). The reward is 0 when
the trajectory never answered (without calling the model), else 1 iff the reply
contains "SUCCESS" and not "NOT SUCCESS" (the reference's rule, case-sensitive).

The random-reward control (:func:`random_rewards`) gives exactly ``k`` positives —
as many as the judge arm gave — to ``k`` answered trajectories drawn at random, so it
trains on as much data as the judge arm, only uncorrelated with success.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.pae import prompts
from agents.pae.sites.grading import grade
from agents.pae.som import shown_url

EVALUATOR_STATES = 3  # spec: evaluator_imgs = 3
STATE_CHARS = 1200
TABLE_CHARS = 1500


#: The judge's check lines (prompts.EVALUATOR_USER), as a constraint for local models, which skip them in
#: free text: "Response says" copies the answer (a 1.5B model otherwise copied the page's value there) and
#: "Page shows" is one of the states' own page-text lines or "nothing" (it otherwise copied URLs) — the model
#: chooses the line and decides whether it answers the task; the grammar only keeps the form.
PAGE_LINES = 60


def page_lines(states: Sequence[State]) -> list[str]:
    """The distinct page-text lines of the judged states, the last state first (at most PAGE_LINES)."""
    out: list[str] = []
    for st in reversed(list(states)[-EVALUATOR_STATES:]):
        for line in st.page_text[:STATE_CHARS].splitlines():
            line = " ".join(line.split())[:200]
            if line and line not in out:
                out.append(line)
    return out[:PAGE_LINES]


def check_format(answer: str, lines: Sequence[str] = ()) -> str:
    said = _literal(" ".join(answer.split())[:300]) or "[^\\n]{0,300}"
    page = "(" + "|".join([*(_literal(x) for x in lines), "nothing"]) + ")" if lines else "[^\\n]{3,300}"
    return (
        r"Asked: [^\n]{3,160}\nResponse says: " + said + r"\nPage shows: " + page + r"\nAnswers: (yes|no)\n"
        r"Verdict: (SUCCESS|NOT SUCCESS)"
    )


def _literal(text: str) -> str:
    """``text`` as a regex matching itself (only the metacharacters escaped, as llguidance's syntax wants)."""
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text)


@dataclass(frozen=True)
class Verdict:
    evaluator: str  # "oracle", "llm:<model>", "random"
    reward: float
    text: str
    called: bool = True  # False when the rule decided without a model call


@dataclass(frozen=True)
class State:
    """One browser state as the evaluator sees it."""

    url: str
    page_text: str
    element_table: str = ""
    screenshot: str | None = None

    def describe(self, chars: int = STATE_CHARS, table_chars: int = TABLE_CHARS) -> str:
        out = f"URL: {shown_url(self.url)}\nPage text: {self.page_text[:chars]}"
        if self.element_table:
            out += f"\nElements:\n{self.element_table[:table_chars]}"
        return out


def verdict_reward(reply: str) -> float:
    """1.0 iff the judge's reply contains "SUCCESS" and not "NOT SUCCESS"."""
    return 1.0 if ("SUCCESS" in reply and "NOT SUCCESS" not in reply) else 0.0


def parsable(reply: str) -> bool:
    """The reply states a verdict at all ("SUCCESS", which "NOT SUCCESS" contains)."""
    return "SUCCESS" in reply


class LLMJudge:
    """The autonomous evaluator, through the gateway."""

    def __init__(
        self, model: str | None = None, max_tokens: int = 256, retries: int = 2, checked: bool | None = None
    ) -> None:
        from core.config import get_settings

        self.model = model or get_settings().llm_model
        # Local models skip the prompt's check lines and jump to "Match:"; for them the first attempt is
        # constrained to the check format (quote the page, compare, verdict). None = local models only.
        self.checked = self.model.startswith("local/") if checked is None else checked
        self.max_tokens = max_tokens
        self.retries = retries
        self.name = f"llm:{self.model}"
        self.unparsable = 0  # replies that never stated a verdict, after the retries

    def messages(self, task: str, answer: str, states: Sequence[State]) -> tuple[str, str]:
        last = list(states)[-EVALUATOR_STATES:]
        body = "\n\n".join(f"[state {i + 1}]\n{s.describe()}" for i, s in enumerate(last))
        user = prompts.EVALUATOR_USER.format(task=task, answer=answer, n=len(last), states=body)
        return prompts.EVALUATOR_SYSTEM, user

    def evaluate(self, task: str, answer: str | None, states: Sequence[State]) -> Verdict:
        if answer is None:
            return Verdict(self.name, 0.0, "no ANSWER was given: reward 0", called=False)
        from core.llm import complete
        from core.llm.gateway import supports_vision

        system, user = self.messages(task, answer, states)
        last = list(states)[-EVALUATOR_STATES:]
        shots = [s.screenshot for s in last if s.screenshot]
        if shots and supports_vision(self.model):
            prompt: Any = [user, *shots]
        else:
            prompt = user
        replies = []
        for attempt in range(1 + self.retries):
            ask = prompt if attempt == 0 else _with_reminder(prompt)
            extra: dict[str, Any] = (
                {"repeat_penalty": 1.1, "no_repeat_ngram": 12} if self.model.startswith("local/") else {}
            )
            if self.checked and attempt == 0:
                extra["regex"] = check_format(answer, page_lines(last))
            try:
                reply = complete(
                    ask,
                    system=system,
                    model=self.model,
                    max_tokens=self.max_tokens,
                    temperature=0.0 if attempt == 0 else 0.7,
                    seed=attempt,
                    tag="pae.evaluator",
                    **extra,
                ).text
            except Exception as exc:
                # the grammar engine can reject the model's next token ("token 0 broke the constraint");
                # that is an unparsable reply, asked again in free text, never the end of a whole run
                if "regex" not in extra:
                    raise
                reply = f"[constrained decoding failed: {str(exc).splitlines()[0][:200]}]"
            replies.append(reply)
            if parsable(reply):
                text = reply if attempt == 0 else f"[attempt {attempt + 1}] {reply}"
                return Verdict(self.name, verdict_reward(reply), text)
        self.unparsable += 1
        return Verdict(self.name, 0.0, "[unparsable after retries] " + replies[-1])


def _with_reminder(prompt: Any) -> Any:
    note = "\n(End your reply with exactly one verdict line: SUCCESS or NOT SUCCESS.)"
    if isinstance(prompt, list):
        return [prompt[0] + note, *prompt[1:]]
    return prompt + note


class OracleEvaluator:
    """The sites' ground truth: the task's string-match reference (tasks without one cannot be judged)."""

    name = "oracle"

    def evaluate(self, reference: dict[str, Any], answer: str | None) -> Verdict | None:
        if not reference:
            return None
        if answer is None:
            return Verdict(self.name, 0.0, "no ANSWER was given", called=False)
        r = grade(reference, answer)
        return Verdict(self.name, r, f"answer {'matches' if r else 'does not match'} the reference {reference}")


class RandomReward:
    """The ablation: a coin flip with success probability ``p`` (answered trajectories only)."""

    name = "random"

    def __init__(self, p: float, seed: int) -> None:
        self.p, self.rng = p, random.Random(seed)

    def evaluate(self, answer: str | None) -> Verdict:
        if answer is None:
            return Verdict(self.name, 0.0, "no ANSWER was given", called=False)
        r = 1.0 if self.rng.random() < self.p else 0.0
        return Verdict(self.name, r, f"random reward (p={self.p:.2f})")


def random_rewards(answered: Sequence[str], k: int, seed: int | str) -> dict[str, float]:
    """Exactly ``min(k, len(answered))`` positives on answered trajectory ids drawn at random; the rest 0."""
    ids = sorted(answered)
    chosen = set(random.Random(f"random-reward:{seed}").sample(ids, min(max(0, k), len(ids))))
    return {i: (1.0 if i in chosen else 0.0) for i in ids}


def agreement(pairs: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Agreement of two binary evaluators: accuracy, Cohen's κ, and the judge's precision/recall vs the oracle.

    ``pairs`` are (judge, oracle) rewards.
    """
    n = len(pairs)
    if n == 0:
        return {
            "n": 0,
            "agreement": float("nan"),
            "kappa": float("nan"),
            "precision": float("nan"),
            "recall": float("nan"),
        }
    a = [(j > 0, o > 0) for j, o in pairs]
    acc = sum(j == o for j, o in a) / n
    pj, po = sum(j for j, _ in a) / n, sum(o for _, o in a) / n
    pe = pj * po + (1 - pj) * (1 - po)
    kappa = (acc - pe) / (1 - pe) if pe < 1 else (1.0 if acc == 1 else 0.0)
    tp = sum(j and o for j, o in a)
    prec = tp / sum(j for j, _ in a) if any(j for j, _ in a) else float("nan")
    rec = tp / sum(o for _, o in a) if any(o for _, o in a) else float("nan")
    return {"n": n, "agreement": acc, "kappa": kappa, "precision": prec, "recall": rec}
