"""Prompts for bench/local_llm.py: this project's own output formats (DEFAME judge and planner, PAE policy).

The judge and planner prompts follow the DEFAME spec (stage 5 verdict over decision
options; stage 1 actions in ``name("args")`` form) on AVeriTeC dev claims; the PAE
prompts follow the WebVoyager Thought/Action format on the PAE WebArena map tasks with
a small Set-of-Marks element table. Each entry pairs a prompt with the constraint the
caller would pass and a parser that says whether a free-form reply is usable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LABELS = {
    "supported": "The knowledge from the fact-check supports or at least strongly implies the claim.",
    "refuted": "The knowledge from the fact-check clearly refutes the claim.",
    "not enough evidence": "The fact-check does not contain sufficient information to come to a conclusion.",
    "conflicting evidence/cherrypicking": "The claim has both supporting and refuting evidence.",
}
JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"insights": {"type": "string", "maxLength": 300}, "verdict": {"enum": list(LABELS)}},
    "required": ["insights", "verdict"],
    "additionalProperties": False,
}
ACTION = r'^(web_search|image_search|wiki_lookup)\("[^"\n]{1,80}"\)$'
PLAN_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 200},
        "actions": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string", "pattern": ACTION}},
    },
    "required": ["reasoning", "actions"],
    "additionalProperties": False,
}
PAE_FORMS = (
    r"Click \[\d{1,3}\]|Type \[\d{1,3}\]; \[[^\]\n]{1,80}\]|Scroll \[(\d{1,3}|WINDOW)\]; \[(up|down)\]"
    r"|Wait|GoBack|Google|ANSWER; \[[^\]\n]{1,200}\]"
)
PAE_REGEX = r"Thought: [^\n]{1,300}\nAction: (" + PAE_FORMS + ")"
ELEMENTS = (
    '[1]: <input> "Search"\n[2]: <button> "Search"\n[3]: <button> "Directions"\n'
    '[4]: <a> "Sign in"\n[5]: <select> "Travel mode"'
)


@dataclass
class Case:
    """One prompt of a family, the constraint for it, and the free-form parser."""

    family: str
    prompt: str
    constraint: dict[str, Any]  # kwargs for core.llm.complete
    parses: Callable[[str], bool]


def _json_ok(schema: dict) -> Callable[[str], bool]:
    import jsonschema

    def ok(text: str) -> bool:
        body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
        try:
            jsonschema.validate(json.loads(body), schema)
        except (ValueError, jsonschema.ValidationError):
            return False
        return True

    return ok


def _pae_ok(text: str) -> bool:
    """The PAE parser: a ``Thought:`` and an ``Action:`` line whose action is one of the 7 forms."""
    m = re.search(r"Thought:(.*?)\nAction:\s*(.+)", text, flags=re.S)
    return bool(m) and re.fullmatch(PAE_FORMS, m.group(2).strip().splitlines()[0].strip()) is not None


def claims(data_dir: Path, n: int) -> list[dict]:
    return json.loads((data_dir / "averitec" / "dev.json").read_text())[:n]


def judge_cases(data_dir: Path, n: int) -> list[Case]:
    options = "\n".join(f"- {k}: {v}" for k, v in LABELS.items())
    out = []
    for c in claims(data_dir, n):
        prompt = (
            f'# Fact-check\nClaim: "{c["claim"]}" (date: {c.get("claim_date")}, '
            f"speaker: {c.get('speaker') or 'unknown'})\n\n## Decision Options\n{options}\n\n"
            "Summarise the key insights in one short paragraph, then choose the option that fits best. "
            'Reply with only a JSON object: {"insights": "...", "verdict": "<one option>"}'
        )
        out.append(
            Case(
                "DEFAME judge (JSON)",
                prompt,
                {
                    "response_format": {
                        "type": "json_schema",
                        "json_schema": {"name": "judgement", "schema": JUDGE_SCHEMA},
                    }
                },
                _json_ok(JUDGE_SCHEMA),
            )
        )
    return out


def planner_cases(data_dir: Path, n: int) -> list[Case]:
    out = []
    for c in claims(data_dir, n):
        prompt = (
            f'# Fact-check\nClaim: "{c["claim"]}"\n\nThe knowledge is not enough yet. Propose as few '
            "actions as possible but as many as needed. Valid actions:\n"
            '- web_search("query"): search the web\n- image_search("query"): search for images\n'
            '- wiki_lookup("title"): read a Wikipedia article\n'
            'Reply with only a JSON object: {"reasoning": "...", "actions": ["web_search(\\"...\\")"]}'
        )
        out.append(
            Case(
                "DEFAME planner (JSON)",
                prompt,
                {"response_format": {"type": "json_schema", "json_schema": {"name": "plan", "schema": PLAN_SCHEMA}}},
                _json_ok(PLAN_SCHEMA),
            )
        )
    return out


def pae_cases(data_dir: Path, n: int) -> list[Case]:
    tasks = [
        json.loads(line)
        for line in (data_dir / "pae" / "webarena_map_google_fixed_eval.jsonl").read_text().splitlines()[:n]
    ]
    out = []
    for t in tasks:
        prompt = (
            "You are a web agent. Each step, reply with exactly:\nThought: <your reasoning>\n"
            "Action: one of Click [n] | Type [n]; [text] | Scroll [n or WINDOW]; [up or down] | Wait | "
            f"GoBack | Google | ANSWER; [text]\n\nTask: {t['ques']}\nPage: OpenStreetMap\n"
            f"Elements:\n{ELEMENTS}"
        )
        out.append(Case("PAE Thought/Action (regex)", prompt, {"regex": PAE_REGEX}, _pae_ok))
    return out


AGREEMENT_PROMPTS = [
    "What is the capital of France?",
    "Give me three synonyms of happy.",
    "What is 12 times 7?",
    "Write a haiku about autumn.",
    "Explain photosynthesis in one sentence.",
    "Who wrote Hamlet?",
    "Name the planets of the solar system.",
    "Translate 'good morning' into Spanish.",
    "What does a fact-checker do?",
    "Describe a web browser to a child.",
    "What is the boiling point of water?",
    "Suggest a name for a pet turtle.",
    "Why is the sky blue?",
    "List two uses of a paperclip.",
    "What is machine learning?",
    "Summarise the plot of Cinderella in two sentences.",
    "How many legs does a spider have?",
    "Give a tip for staying focused.",
    "What is an airport?",
    "Claim: The Eiffel Tower is in Berlin. Is it true?",
]
SPEED_PROMPT = (
    'Here is a fact-checking record.\nClaim: "In a letter to Steve Jobs, Sean Connery refused to appear in an '
    'Apple commercial." The claim was shared on Facebook in October 2020. A web search found that the letter '
    "first appeared on a satirical website in 2011, that Apple never approached Sean Connery for an advertising "
    "campaign, and that the letter's wording matches a parody piece. Several fact-checking organisations, "
    "including Snopes and Check Your Fact, rated the story as false. The Apple archives list no campaign with "
    "the actor, and the actor's representatives never commented on the letter.\n\n"
    "Write a detailed, multi-paragraph explanation of how a careful fact-checker would reason about this claim, "
    "which sources they would trust, and what the final verdict should be."
)
