"""The planner guard (copied example queries, off-topic queries; retry and fallback) and echo stripping."""

from __future__ import annotations

from agents.defame.config import DefameConfig
from agents.defame.experiment import check_claim
from agents.defame.guard import check_action, fallback_query, strip_echo
from agents.defame.parsing import Action

EIFFEL = "The Eiffel Tower is located in Berlin."


def test_copied_example_and_off_topic_queries_are_rejected():
    assert "copies an example" in check_action(Action("web_search", "Golden Gate Bridge opening year"), EIFFEL)
    assert "copies an example" in check_action(Action("web_search", "Eiffel Golden Gate Bridge opening year"), EIFFEL)
    assert "no content word" in check_action(Action("web_search", "weather today"), EIFFEL)
    assert check_action(Action("web_search", "Eiffel Tower location"), EIFFEL) is None
    assert check_action(Action("web_search", "Berlin landmarks"), EIFFEL) is None
    # the example's words are fine when the claim is about them
    assert (
        check_action(Action("web_search", "Golden Gate Bridge opening year"), "The Golden Gate Bridge opened in 1952.")
        is None
    )
    assert check_action(Action("geolocate", "<image:1>"), EIFFEL) is None
    assert fallback_query(EIFFEL) == "Eiffel Tower located Berlin"


def test_echoed_instructions_are_stripped():
    reply = (
        "- Propose as few actions as possible, but as many as needed.\n"
        "The tower stands in Paris.\n"
        "# Record\n"
        'Claim: "The Golden Gate Bridge opened in 1952."\n'
        "So the claim is wrong."
    )
    assert strip_echo(reply) == "The tower stands in Paris.\nSo the claim is wrong."
    # fragments seen in a 135M run: a sentence of the system prompt, an echoed option list, a bare heading
    seen = (
        "###\nThe Record documents the fact-check so far.\n\nConnery refused.\n"
        "Decision Options: 1. In at most one paragraph, summarise the key insights of the fact-check. It is `refuted`"
    )
    assert strip_echo(seen) == "Connery refused.\n1. It is `refuted`"


def test_plan_retries_after_a_rejection_then_falls_back(stage_llm, corpus_store):
    claim = {"text": "The Golden Gate Bridge opened in 1952.", "images": {}, "date": None}
    model, script = stage_llm(
        {
            "plan": ['```\nweb_search("stock prices today")\n```', '```\nweb_search("Golden Gate Bridge 1937")\n```'],
            "summarize": ["The bridge opened in 1937."],
            "merge": ["Opened 1937 [s](https://history.example.org/ggb)."],
            "develop": ["- Do not restate the Claim.\nThe bridge opened in 1937."],
            "judge": ["The record says 1937. `refuted`"],
            "justify": ["Sources give 1937."],
        }
    )
    fc = check_claim(claim, DefameConfig(model=model, max_iterations=1), store=corpus_store, checkpointer=None)
    plans = [c for c in fc.state["calls"] if c["stage"] == "plan"]
    assert plans[0]["accepted"] == 0 and "no content word" in plans[0]["rejected"][0]
    assert plans[1]["accepted"] == 1
    assert "# Rejected" in script.prompts["plan"][1] and "stock prices today" in script.prompts["plan"][1]
    assert fc.state["performed"][0]["argument"] == "Golden Gate Bridge 1937"
    assert "Do not restate" not in fc.markdown, "no instruction text in the report"
    # every attempt rejected: one search of the claim's own words runs instead
    model, _ = stage_llm(
        {
            "plan": ['```\nweb_search("weather forecast tomorrow")\n```'],
            "summarize": ["NONE"],
            "develop": ["Nothing."],
            "judge": ["`not enough information`"],
            "justify": ["Nothing found."],
        }
    )
    fc = check_claim(claim, DefameConfig(model=model, max_iterations=1), store=corpus_store, checkpointer=None)
    plans = [c for c in fc.state["calls"] if c["stage"] == "plan"]
    assert len(plans) == 3 and plans[-1]["guard_fallback"] == 'web_search("Golden Gate Bridge opened 1952")'


def test_up_to_five_actions_and_free_text_judge_first(stage_llm, corpus_store):
    from agents.defame.calls import plan_regex

    five = "Why\n```\n" + "\n".join(f'web_search("bridge q{i}")' for i in range(5)) + "\n```"
    import re

    assert re.fullmatch(plan_regex(["web_search"], [], 5), five)
    assert not re.fullmatch(
        plan_regex(["web_search"], [], 5), five.replace("```\nweb", '```\nweb_search("bridge q9")\nweb', 1)
    )
    cfg = DefameConfig(model="scripted/x")
    assert cfg.max_actions == 5 and cfg.judge_free_first
