"""Proposer post-processing and both proposers."""

from __future__ import annotations

import json
import random

from agents.pae.proposer import LLMProposer, TemplateProposer, parse_proposals
from agents.pae.sites import build_sites

KNOWN = {"shop": "/shop/", "map": "/map/"}


def _line(name, q, i=0):
    return json.dumps({"web_name": name, "id": f"{name}--{i}", "ques": q, "web": "http://ignored"})


def test_postprocessing_rules():
    text = "\n".join(
        [
            "Let me think. " + _line("shop", "This line is before Output and must be ignored"),
            "Output:",
            _line("shop", "What is the price of the Blue Kettle?"),
            "{not json at all",
            _line("shop", "what is the price of the blue kettle"),  # duplicate (case/punctuation)
            _line("github", "Star the repository paperworks"),  # unknown site
            _line("map", "How far is Hunt Library from the University Center?"),
            json.dumps({"web_name": "shop", "ques": 42}),  # invalid question
            _line("shop", "short"),  # too short
            "```",
            _line("shop", "Which brand makes the Green Tent?") + ",",
        ]
    )
    got = parse_proposals(text, KNOWN, seen=["Which brand makes the Green Tent?"])
    assert [g["ques"] for g in got] == [
        "What is the price of the Blue Kettle?",
        "How far is Hunt Library from the University Center?",
    ]
    assert got[0]["web"] == "/shop/"  # the start URL comes from our table, not the model


def test_llm_proposer_through_the_gateway(scripted_llm):
    reply = "Thinking...\nOutput:\n" + "\n".join(
        [
            _line("shop", "What is the cheapest kettle in the shop?"),
            _line("shop", "How many toys cost under $20?"),
            "junk",
        ]
    )
    prov = scripted_llm("proposer", [reply])
    site = build_sites(0)["shop"]
    tasks = LLMProposer(model="scripted/proposer", max_tokens=64).propose(site, 5)
    assert [t.question for t in tasks] == ["What is the cheapest kettle in the shop?", "How many toys cost under $20?"]
    assert all(t.proposer == "llm" and not t.reference and t.site == "shop" for t in tasks)
    system = prov.calls["proposer"][0][0]["content"]
    assert "exactly 5 tasks" in system and "Output:" in system and "last three screenshots" in system


def test_template_proposer_is_deterministic_and_verifiable():
    site = build_sites(0)["recipes"]
    a = TemplateProposer().propose(site, 8, random.Random(1))
    b = TemplateProposer().propose(site, 8, random.Random(1))
    assert [t.id for t in a] == [t.id for t in b] and len({t.id for t in a}) == 8
    assert all(t.reference and t.plan and t.plan[-1][0] == "answer" for t in a)
    c = TemplateProposer().propose(site, 8, random.Random(2), exclude={t.id for t in a})
    assert not {t.id for t in c} & {t.id for t in a}
