"""The whole loop with a scripted LLM (spec §7 integration scripts A, B, C) and resuming from a checkpoint."""

from __future__ import annotations

import sqlite3

import pytest

from agents.defame.config import DefameConfig
from agents.defame.experiment import check_claim
from agents.defame.labels import Label

CLAIM = {
    "text": "The Golden Gate Bridge opened in 1952.",
    "images": {},
    "date": "2021-03-01",
    "author": "A. Blogger",
    "origin": None,
    "claim_id": None,
}
PLAN_2 = 'Two searches.\n```\nweb_search("Golden Gate Bridge opening")\nweb_search("Golden Gate construction")\n```'
PLAN_1 = 'One more search to be sure of the year.\n```\nweb_search("bridge opened 1937")\n```'
JUDGE_NEI = "Key insight: unclear so far.\nThe evidence is thin, so `not enough information`."
JUDGE_REF = "The sources say 1937.\nThe claim is `refuted`."


def heads(md: str, heading: str) -> int:
    return sum(1 for line in md.splitlines() if line == heading)


def run(model, store, benchmark="default", **kw):
    cfg = DefameConfig(model=model, corpus="defame-test", benchmark=benchmark, limit_per_search=2, **kw)
    return check_claim(CLAIM, cfg, store=store, checkpointer=None)


def test_script_a_two_rounds_then_refuted(stage_llm, corpus_store):
    model, script = stage_llm(
        {
            "plan": [PLAN_2, PLAN_1],
            "summarize": ["The bridge opened in 1937."],
            "merge": ["Merged: opened 1937 [Source](https://history.example.org/ggb)."],
            "develop": ["The year 1937 contradicts 1952."],
            "judge": [JUDGE_NEI, JUDGE_REF],
            "justify": ["Sources show 1937 [Source](https://history.example.org/ggb)."],
        }
    )
    fc = run(model, corpus_store)
    assert fc.label == Label.REFUTED
    kinds = [b["kind"] for b in fc.state["record"]]
    md = fc.markdown
    assert heads(md, "## Actions") == 2 and heads(md, "## Evidence") == 2 and heads(md, "## Elaboration") == 2
    assert heads(md, "## Final Judgement") == 1 and "### Verdict: REFUTED" in md
    assert fc.state["justification"].startswith("Sources show 1937")
    assert kinds.count("evidence") == 2
    # Round 1: two searches; each returns up to 2 sources -> summaries, merges; round 2: one search.
    order = script.order
    assert order[0] == "plan" and order[-1] == "justify"
    r1_end = order.index("judge")
    assert set(order[1 : r1_end - 1]) <= {"summarize", "merge"} and order[r1_end - 1] == "develop"
    assert order[r1_end + 1] == "plan"
    # Seen URLs are never returned twice; the snopes doc and the post-claim doc never appear.
    urls = [s["url"] for b in fc.state["record"] if b["kind"] == "evidence" for e in b["items"] for s in e["sources"]]
    assert len(urls) == len(set(urls))
    assert not any("snopes" in u or "later.example" in u for u in urls)
    assert fc.state["iteration"] == 2
    # The gateway's tally (tag= per stage) agrees with the agent's own call log.
    gw = fc.to_json()["gateway_usage_this_invocation"]
    assert gw["calls"] == len(order) == len(fc.state["calls"])
    assert gw["by_tag"]["plan"] == 2 and gw["by_tag"]["judge"] == 2 and gw["by_tag"]["justify"] == 1
    assert fc.usage()["plan"]["calls"] == 2


def test_script_b_three_rounds_nei(stage_llm, corpus_store):
    plans = [f'```\nweb_search("Golden Gate query number {i}")\n```' for i in range(3)]
    model, script = stage_llm(
        {
            "plan": plans,
            "summarize": ["NONE"],
            "develop": ["Nothing yet."],
            "judge": [JUDGE_NEI],
            "justify": ["No evidence either way."],
        }
    )
    fc = run(model, corpus_store, benchmark="mocheg")
    assert fc.state["iteration"] == 3 and fc.label == Label.NEI
    assert "No new evidence found." in fc.markdown
    judge_prompts = script.prompts["judge"]
    assert len(judge_prompts) == 3
    assert "`not enough information`" in judge_prompts[2]  # MOCHEG has NEI in its final set


def test_script_b_verite_final_judgement_has_no_nei(stage_llm, corpus_store):
    plans = [f'```\nweb_search("Golden Gate query number {i}")\n```' for i in range(3)]
    model, script = stage_llm(
        {
            "plan": plans,
            "summarize": ["NONE"],
            "develop": ["Nothing yet."],
            "judge": [JUDGE_NEI, JUDGE_NEI, "Image and caption match: `supported`"],
            "justify": ["ok"],
        }
    )
    fc = run(model, corpus_store, benchmark="verite")
    prompts = script.prompts["judge"]
    assert "`not enough information`" in prompts[0] and "`not enough information`" in prompts[1]
    assert "`not enough information`" not in prompts[2]
    assert fc.label == Label.SUPPORTED


def test_script_c_no_actions_means_single_final_judgement(stage_llm, corpus_store):
    model, script = stage_llm({"plan": ["I do not know what to do."], "judge": [JUDGE_REF], "justify": ["j"]})
    fc = run(model, corpus_store)
    assert script.order == ["plan", "plan", "plan", "judge", "justify"]  # 3 parse attempts, then final
    assert heads(fc.markdown, "## Evidence") == 0 and heads(fc.markdown, "## Final Judgement") == 1
    assert fc.state["final"] is True and fc.label == Label.REFUTED


def test_refused_verdict_skips_justification(stage_llm, corpus_store):
    model, script = stage_llm({"plan": ["nothing"], "judge": ["I cannot say."]})
    fc = run(model, corpus_store)
    assert fc.label == Label.REFUSED
    assert script.order.count("judge") == 3 and "justify" not in script.order
    assert script.prompts["judge"][1].endswith("enclose it in backticks like `this`)")


def test_resume_after_crash_does_not_redo_finished_stages(stage_llm, corpus_store, tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    crash = {"on": True}

    def flaky_develop(messages):
        if crash["on"]:  # every attempt fails (the gateway retries) until the "worker" restarts
            raise RuntimeError("worker killed")
        return "Developed."

    model, script = stage_llm(
        {
            "plan": [PLAN_1],
            "summarize": ["The bridge opened in 1937."],
            "merge": ["Both say 1937."],
            "judge": [JUDGE_REF],
            "justify": ["Because 1937."],
        }
    )
    original = script.__call__

    def scripted(messages):
        if "# Your analysis" in str(messages[-1]["content"]):
            script.order.append("develop")
            return flaky_develop(messages)
        return original(messages)

    from core.llm.providers import SCRIPTED

    SCRIPTED.set_script(model.split("/", 1)[1], scripted)
    conn = sqlite3.connect(str(tmp_path / "cp.sqlite"), check_same_thread=False)
    saver = SqliteSaver(conn)
    cfg = DefameConfig(model=model, corpus="defame-test", limit_per_search=2)
    with pytest.raises(Exception, match="worker killed"):
        check_claim(CLAIM, cfg, store=corpus_store, checkpointer=saver, thread_id="t1")
    crash["on"] = False
    before = list(script.order)
    assert before[0] == "plan" and before[-1] == "develop" and "summarize" in before
    assert before.count("plan") == 1
    fc = check_claim(CLAIM, cfg, store=corpus_store, checkpointer=saver, thread_id="t1")
    after = script.order[len(before) :]
    before = [s for s in before if s != "develop"]
    assert after[0] == "develop" and "plan" not in after and "summarize" not in after
    assert fc.resumed and fc.label == Label.REFUTED and heads(fc.markdown, "## Evidence") == 1
    # A finished thread is returned as stored, without new LLM calls.
    n = len(script.order)
    again = check_claim(CLAIM, cfg, store=corpus_store, checkpointer=saver, thread_id="t1")
    assert len(script.order) == n and again.label == Label.REFUTED
    conn.close()


def test_postgres_checkpointer_when_the_app_db_is_postgres(
    stage_llm, corpus_store, settings, postgres_url, monkeypatch
):
    """With a PostgreSQL app database the default checkpointer is langgraph's PostgresSaver, and resumes work."""
    from core.checkpoint import checkpointer

    monkeypatch.setattr(settings, "database_url", postgres_url)
    with checkpointer("defame") as saver:
        assert type(saver).__name__ == "PostgresSaver"
    model, script = stage_llm(
        {
            "plan": [PLAN_1],
            "summarize": ["The bridge opened in 1937."],
            "merge": ["1937."],
            "develop": ["1937."],
            "judge": [JUDGE_REF],
            "justify": ["Because 1937."],
        }
    )
    cfg = DefameConfig(model=model, corpus="defame-test", limit_per_search=2)
    first = check_claim(CLAIM, cfg, store=corpus_store, thread_id="pg-1")
    n = len(script.order)
    again = check_claim(CLAIM, cfg, store=corpus_store, thread_id="pg-1")
    assert first.label == again.label == Label.REFUTED and again.resumed and len(script.order) == n


def test_thread_id_changes_with_the_prompts_wording(monkeypatch):
    """A reworded prompt must not resume or return a checkpoint written under the old wording."""
    from agents.defame import prompts
    from agents.defame.experiment import thread_for

    claim = {"text": "The Eiffel Tower is in Berlin.", "images": {}}
    cfg = DefameConfig(model="scripted/x")
    before = thread_for(claim, cfg)
    assert thread_for(claim, cfg) == before
    monkeypatch.setattr(prompts, "SUMMARIZE_SOURCE", prompts.SUMMARIZE_SOURCE + "\n")
    assert thread_for(claim, cfg) != before
    monkeypatch.undo()
    assert thread_for(claim, cfg) == before


def test_lenient_summaries_keep_the_none_rule_and_log_each_source(stage_llm):
    """summary_prompt='lenient': another wording, the same rule (NONE = irrelevant); each call names its source."""
    from agents.defame.config import DefameContext
    from agents.defame.nodes.summarize import summarize_result

    model, script = stage_llm(
        {
            "summarize": [
                "The history site says the bridge opened on May 27, 1937, not in 1952.",
                "NONE",
                "Construction began in 1933 and took four years.",
            ],
            "merge": ["The bridge opened in 1937 [Source](https://example.org/0)."],
        }
    )
    srcs = [{"url": f"https://example.org/{i}", "title": "t", "text": "some text"} for i in range(3)]
    state = {"claim": {"text": "The Golden Gate Bridge opened in 1952.", "images": {}}, "record": []}
    ctx = DefameContext(config=DefameConfig(model=model, summary_prompt="lenient"))
    summary, calls = summarize_result({"action": {"name": "web_search"}, "sources": srcs}, state, ctx, 1)
    assert all("entirely about something else" in p for p in script.prompts["summarize"])
    assert [(c["source"], c["kept"]) for c in calls[:3]] == [
        ("https://example.org/0", True),
        ("https://example.org/1", False),
        ("https://example.org/2", True),
    ]
    assert script.order == ["summarize"] * 3 + ["merge"]  # two kept sources -> a merge
    assert "example.org/0" in summary and "example.org/2" in summary and "example.org/1" not in summary
    # the default stays the paper's prompt
    model2, script2 = stage_llm({"summarize": ["NONE"]})
    ctx2 = DefameContext(config=DefameConfig(model=model2))
    assert summarize_result({"action": {}, "sources": srcs[:1]}, state, ctx2, 1)[0] is None
    assert "entirely about something else" not in script2.prompts["summarize"][0]


@pytest.mark.parametrize(
    ("summary", "absent"),
    [
        ("The search result does not mention Sean Connery or Steve Jobs.", True),
        ("The article doesn't provide any information about the vaccine trial.", True),
        ("There is no information about the 2020 census in this result. It is about a football match.", True),
        ("This source is unrelated to the Claim; it covers a cooking contest.", True),
        ("The result is not directly relevant to the Claim.", True),
        ("The source does not mention the date, but it reports that the bill was signed by Biden.", False),
        ("The history site says the bridge opened on May 27, 1937, not in 1952.", False),
        ("Reuters (2021) reports no evidence of fraud was found by the state's audit.", False),  # evidence
        ("The page contains no details on the Claim's event.", True),
        ("The CDC says the vaccine does not contain mercury.", False),
        ("The fact-check article does not support the Claim: the photo is from 2015.", False),
        ("A government table lists 576,851 residents in 2020. It does not mention 2019.", False),
    ],
)
def test_absence_statements_are_recognised_in_the_first_sentence_only(summary, absent):
    from agents.defame.nodes.summarize import is_relevant, states_absence

    assert states_absence(summary) is absent
    assert is_relevant(summary, lenient=True) is not absent
    assert is_relevant(summary)  # the paper's rule: only NONE is irrelevant


def test_lenient_summaries_that_say_the_source_does_not_bear_on_the_claim_are_dropped(stage_llm):
    from agents.defame.config import DefameContext
    from agents.defame.nodes.summarize import summarize_result

    model, script = stage_llm(
        {
            "summarize": [
                "The search result does not mention the Golden Gate Bridge or 1952.",
                "The history site says the bridge opened on May 27, 1937, not in 1952.",
            ],
        }
    )
    srcs = [{"url": f"https://example.org/{i}", "title": "t", "text": "some text"} for i in range(2)]
    state = {"claim": {"text": "The Golden Gate Bridge opened in 1952.", "images": {}}, "record": []}
    ctx = DefameContext(config=DefameConfig(model=model, summary_prompt="lenient"))
    summary, calls = summarize_result({"action": {"name": "web_search"}, "sources": srcs}, state, ctx, 1)
    assert [c["kept"] for c in calls] == [False, True]
    assert script.order == ["summarize"] * 2  # one kept source: no merge
    assert summary.startswith("The history site") and "example.org/1" in summary and "example.org/0" not in summary


def test_thread_id_changes_with_the_relevance_rule(monkeypatch):
    import re

    from agents.defame.experiment import thread_for
    from agents.defame.nodes import summarize

    claim = {"text": "The Eiffel Tower is in Berlin.", "images": {}}
    cfg = DefameConfig(model="scripted/x")
    before = thread_for(claim, cfg)
    monkeypatch.setattr(summarize, "_ABSENCE", re.compile(summarize._ABSENCE.pattern + "|nope"))
    assert thread_for(claim, cfg) != before
