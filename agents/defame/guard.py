"""Guards against a small model's two typical failures: copying the prompt instead of answering it.

* **Planner guard** (:func:`check_action`): a search whose query copies a few-shot
  example's argument (the 135M model searched "Golden Gate Bridge opening year" for 18 of
  30 AVeriTeC claims) or shares no content word with the claim is rejected; the planner is
  asked again with the reason. Image actions and queries about the claim pass.
* **Echo stripping** (:func:`strip_echo`): lines of a reply that repeat the prompt's own
  instructions, headings or examples are removed before the reply enters the record, so
  no instruction text reaches the report.
"""

from __future__ import annotations

import functools
import re

from agents.defame import prompts
from agents.defame.parsing import Action

STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being this that these
    those it its he she they them his her their we you i not no yes do does did has have had will would can could
    should may might must shall than then there here what which who whom whose when where why how all any both
    each few more most other some such only own same so too very just also about into over after before under
    again further once during out up down off while said says claim claims true false""".split()
)
_WORD = re.compile(r"[a-z0-9]+")
EXAMPLE_OVERLAP = 0.6


def stem(word: str) -> str:
    """A crude stem: the first 4 letters of a word longer than 5 ("opened", "opening" -> "open")."""
    return word[:4] if len(word) > 5 else word


def content_words(text: str) -> set[str]:
    """Lower-cased stems of the words that carry content (3+ characters, not stop words, numbers kept)."""
    return {stem(w) for w in _WORD.findall(text.lower()) if (len(w) >= 3 or w.isdigit()) and w not in STOPWORDS}


def _query_of(action_line: str) -> str:
    m = re.search(r'\("(.*)"\)', action_line)
    return m.group(1) if m else ""


@functools.lru_cache(maxsize=1)
def example_queries() -> tuple[str, ...]:
    """The quoted arguments of the planner's few-shot examples."""
    return tuple(q for _, _, line in prompts.DEFAULT_EXAMPLES.values() if (q := _query_of(line)))


def check_action(action: Action, claim_text: str) -> str | None:
    """Why ``action`` is rejected for this claim, or None when it may run."""
    if action.image_id is not None:
        return None
    query = action.argument.strip()
    q_words, c_words = content_words(query), content_words(claim_text)
    for ex in example_queries():
        ex_words = content_words(ex)
        copied = (q_words & ex_words) - c_words
        if q_words and len(copied) / len(q_words) >= EXAMPLE_OVERLAP:
            return f'"{query}" copies an example query ({", ".join(sorted(copied))} are not in the claim)'
    if not q_words & c_words:
        return f'"{query}" shares no content word with the claim'
    return None


def split_actions(actions: list[Action], claim_text: str) -> tuple[list[Action], list[str]]:
    """(accepted actions, rejection reasons)."""
    ok, why = [], []
    for a in actions:
        reason = check_action(a, claim_text)
        if reason is None:
            ok.append(a)
        else:
            why.append(f"{a}: {reason}")
    return ok, why


def fallback_query(claim_text: str, max_chars: int = 60) -> str:
    """A query made of the claim's own content words (used when every proposal was rejected)."""
    words = [w for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]*", claim_text) if w.lower() not in STOPWORDS]
    out = ""
    for w in words:
        if len(out) + len(w) + 1 > max_chars:
            break
        out = f"{out} {w}".strip()
    return out or claim_text[:max_chars].strip()


def _norm(line: str) -> str:
    line = re.sub(r"^[\s\-*#>\d.)]+", "", line.lower())
    return " ".join(re.sub(r"[`\"'*_]", "", line).split())


@functools.lru_cache(maxsize=1)
def _prompt_lines() -> frozenset[str]:
    """Normalized lines of every prompt template and example (never the record, which is the model's input)."""
    texts = [
        prompts.SYSTEM,
        prompts.PLAN,
        prompts.SUMMARIZE_SOURCE,
        prompts.MERGE_SUMMARIES,
        prompts.DEVELOP,
        prompts.JUDGE,
        prompts.JUDGE_REMINDER,
        prompts.JUSTIFY,
        prompts.BASELINE,
        prompts.PLAN_RETRY,
    ]
    for claim, reasoning, line in prompts.DEFAULT_EXAMPLES.values():
        texts += [f'Claim: "{claim}"', f"Reasoning: {reasoning}", line]
    from agents.defame.tools.registry import TOOLS

    for spec in TOOLS.values():
        texts += [spec.description, spec.how_to, prompts.ACTION_ENTRY.format(**spec.__dict__)]
    out = set()
    for t in texts:
        for line in t.splitlines():
            line = re.sub(r"\{[a-z_]+\}", "", line)
            for piece in (line, *_SENTENCE.split(line)):
                n = _norm(piece)
                if len(n) >= 12:
                    out.add(n)
    return frozenset(out)


_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_HEADING = re.compile(
    r"^\s*#*\s*(instructions|record|valid actions|examples|your \w+|decision options|rejected)\s*:?\s*", re.IGNORECASE
)


def strip_echo(text: str) -> str:
    """``text`` without the lines and sentences that repeat prompt instructions, examples or section headings."""
    known = _prompt_lines()
    kept = []
    for line in text.splitlines():
        if _norm(line) in known:
            continue
        if re.match(r"^\s*#", line) and _HEADING.match(line):
            continue
        line = _HEADING.sub("", line) if _HEADING.match(line) else line
        sentences = [p for p in _SENTENCE.split(line) if _norm(p) not in known]
        line = " ".join(sentences).strip()
        if re.fullmatch(r"[#\s\d.)-]*", line) and line.strip():
            continue  # what is left of an echoed numbered list or heading
        kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
