"""Structured output through the gateway: JSON schema and regex constraints always hold.

The prompts are decoded concurrently (the llama.cpp backend batches them), greedy, on
the backend ``auto`` picks.
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest

from core.llm import complete

VERDICT = {
    "type": "object",
    "properties": {
        "insights": {"type": "string", "maxLength": 120},
        "verdict": {"enum": ["supported", "refuted", "not enough information", "conflicting"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["insights", "verdict", "confidence"],
    "additionalProperties": False,
}
PLAN = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 100},
        "actions": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "pattern": r'^(web_search|wiki_lookup)\("[^"\n]{1,40}"\)$'},
        },
    },
    "required": ["reasoning", "actions"],
    "additionalProperties": False,
}
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 4},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}
CLAIMS = [
    "The Eiffel Tower is located in Berlin.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The Great Wall of China is visible from the Moon with the naked eye.",
    "In a letter to Steve Jobs, Sean Connery refused to appear in an Apple commercial.",
    "Joe Biden wants to ban all guns in the United States.",
    "The COVID-19 vaccine alters human DNA.",
    "Mount Everest is the tallest mountain above sea level.",
    "Bananas grow on trees that are actually giant herbs.",
]
PROMPTS: list[tuple[str, dict]] = (
    [(f"Claim: {c}\nJudge the claim and reply in JSON with insights, verdict and confidence.", VERDICT) for c in CLAIMS]
    + [(f"Claim: {c}\nPlan up to three search actions to verify it.", PLAN) for c in CLAIMS[:6]]
    + [
        (p, PERSON)
        for p in (
            "Describe a fictional astronaut.",
            "Invent a chess player and list their hobbies.",
            "Who is a typical 30-year-old teacher? Make one up.",
            "Create a character for a fantasy novel.",
            "Give me a profile of a retired sailor.",
            "Make up a person who loves cooking.",
        )
    ]
)
PAE_ACTION = (
    r"Thought: [^\n]{1,200}\nAction: (Click \[\d{1,3}\]|Type \[\d{1,3}\]; \[[^\]\n]{1,60}\]"
    r"|Scroll \[(\d{1,3}|WINDOW)\]; \[(up|down)\]|Wait|GoBack|Google|ANSWER; \[[^\]\n]{1,100}\])"
)
TASKS = [
    "Find the opening hours of the Carnegie Museum of Art.",
    "Tell me the full address of Pittsburgh International Airport.",
    "Search for a vegetarian lasagna recipe with more than 100 reviews.",
    "What is the driving time from CMU to the Waterfront?",
    "Find the price of the cheapest wireless mouse.",
    "Look up the definition of the word 'serendipity'.",
]
ELEMENTS = '[1] <input> "Search"\n[2] <button> "Go"\n[3] <a> "Directions"\n[4] <a> "Sign in"'


def _ask(args):
    prompt, kw = args
    return complete(prompt, temperature=0.0, **kw)


def _many(jobs):
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(_ask, jobs))


def test_json_schema_output_always_parses_and_validates(fast_backend):
    assert len(PROMPTS) == 20
    jobs = [
        (
            p,
            {
                "max_tokens": 256,
                "response_format": {"type": "json_schema", "json_schema": {"name": "out", "schema": s}},
            },
        )
        for p, s in PROMPTS
    ]
    outs = _many(jobs)
    for (prompt, schema), out in zip(PROMPTS, outs):
        obj = json.loads(out.text)  # raises on a single unparseable reply
        jsonschema.validate(obj, schema)
        assert out.finish_reason == "stop", (prompt, out.text)
    verdicts = {json.loads(o.text)["verdict"] for o in outs[: len(CLAIMS)]}
    assert verdicts <= set(VERDICT["properties"]["verdict"]["enum"])


def test_json_object_mode_parses(fast_backend):
    out = complete("List three colours as a JSON object.", max_tokens=80, response_format={"type": "json_object"})
    assert isinstance(json.loads(out.text), dict)


def test_thought_action_regex_always_matches(fast_backend):
    jobs = [
        (
            f"You are a web agent.\nTask: {t}\nElements:\n{ELEMENTS}\nReply with a Thought and an Action.",
            {"max_tokens": 120, "regex": PAE_ACTION},
        )
        for t in TASKS
    ]
    for out in _many(jobs):
        assert re.fullmatch(PAE_ACTION, out.text), out.text


def test_pydantic_response_format(fast_backend):
    from typing import Literal

    from pydantic import BaseModel, Field

    class Verdict(BaseModel):
        verdict: Literal["supported", "refuted"]
        score: int = Field(ge=1, le=5)

    out = complete(
        "Claim: the Moon is made of cheese. Give a verdict and a score from 1 to 5.",
        max_tokens=40,
        response_format=Verdict,
    )
    v = Verdict.model_validate_json(out.text)
    assert v.verdict in ("supported", "refuted") and 1 <= v.score <= 5


def test_gbnf_grammar_option(fast_backend):
    out = complete("Is the sky green? Answer yes or no.", max_tokens=5, grammar='root ::= "yes" | "no"')
    assert out.text in ("yes", "no")


def test_constraint_on_transformers_backend_too(hf_backend):
    out = complete(
        "Claim: The Eiffel Tower is in Berlin. Verdict?",
        max_tokens=40,
        backend="transformers",
        response_format={
            "type": "json_schema",
            "json_schema": {
                "schema": {
                    "type": "object",
                    "properties": {"verdict": {"enum": ["true", "false"]}},
                    "required": ["verdict"],
                    "additionalProperties": False,
                }
            },
        },
    )
    assert json.loads(out.text)["verdict"] in ("true", "false")


@pytest.mark.parametrize(
    "kw, needle",
    [
        (
            {"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "nonsense"}}}},
            "invalid JSON schema",
        ),
        ({"regex": "Thought: (unclosed"}, "invalid regex"),
        ({"backend": "vllm"}, "unknown local backend"),
    ],
)
def test_bad_options_fail_fast_with_a_clear_message(kw, needle):
    import litellm

    t0 = time.perf_counter()
    with pytest.raises(litellm.BadRequestError, match=needle):
        complete("hello", max_tokens=5, **kw)
    assert time.perf_counter() - t0 < 10
