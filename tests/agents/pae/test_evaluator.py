"""Verdict rule, the judge's inputs (task + answer + last 3 states only), oracle, agreement."""

from __future__ import annotations

import math

import pytest

from agents.pae.evaluator import LLMJudge, OracleEvaluator, RandomReward, State, agreement, verdict_reward


def test_verdict_rule():
    assert verdict_reward("The page confirms it. SUCCESS") == 1.0
    assert verdict_reward("Missing the price. NOT SUCCESS") == 0.0
    assert verdict_reward("I cannot tell.") == 0.0
    assert verdict_reward("success") == 0.0  # the reference's rule is case-sensitive


def test_no_answer_is_zero_without_calling_the_model(scripted_llm):
    prov = scripted_llm("judge-none", ["SUCCESS"])
    v = LLMJudge("scripted/judge-none").evaluate("find x", None, [State("u", "t")])
    assert v.reward == 0.0 and not v.called
    assert prov.calls["judge-none"] == []


def test_judge_sees_task_answer_and_last_three_states(scripted_llm):
    prov = scripted_llm("judge", ["The price is shown. SUCCESS"])
    states = [State(f"http://x/{i}", f"page number {i}") for i in range(5)]
    v = LLMJudge("scripted/judge").evaluate("What is the price?", "$3.99", states)
    assert v.reward == 1.0 and v.called
    (msgs,) = prov.calls["judge"]
    user = msgs[-1]["content"]
    assert "TASK: What is the price?" in user and "Result Response: $3.99" in user
    assert "page number 4" in user and "page number 2" in user and "page number 1" not in user
    assert "3 states at the end" in user


def test_oracle_and_random():
    o = OracleEvaluator()
    assert o.evaluate({"must_include": ["$3.99"]}, "It costs $3.99.").reward == 1.0
    assert o.evaluate({"must_include": ["$3.99"]}, None).reward == 0.0
    assert o.evaluate({}, "anything") is None  # LLM-proposed task: no ground truth
    coins = [RandomReward(0.5, seed=1).evaluate("a").reward for _ in range(1)]
    r = RandomReward(0.3, seed=3)
    draws = [r.evaluate("a").reward for _ in range(2000)]
    assert abs(sum(draws) / len(draws) - 0.3) < 0.04 and coins[0] in (0.0, 1.0)
    assert RandomReward(1.0, seed=0).evaluate(None).reward == 0.0


def test_agreement_numbers():
    a = agreement([(1, 1), (0, 0), (1, 0), (0, 0)])
    assert a["n"] == 4 and a["agreement"] == 0.75
    # p_judge = 0.5, p_oracle = 0.25 → p_e = 0.125 + 0.375 = 0.5 → κ = (0.75 - 0.5) / 0.5
    assert math.isclose(a["kappa"], 0.5)
    assert a["precision"] == 0.5 and a["recall"] == 1.0
    assert agreement([])["n"] == 0


def test_a_grammar_failure_is_an_unparsable_reply_not_a_crash(monkeypatch):
    """llguidance can reject the model's next token; the judge asks again in free text (a run once died of it)."""
    import litellm

    import core.llm

    asked: list[dict] = []

    class Reply:
        text = "The page shows the price. SUCCESS"

    def complete(prompt, **kw):
        asked.append(kw)
        if "regex" in kw:
            raise litellm.BadRequestError(
                message="token 0 broke the constraint: Parser Error", model="local/x", llm_provider="local"
            )
        return Reply()

    monkeypatch.setattr(core.llm, "complete", complete)
    v = LLMJudge("local/x", checked=True).evaluate("What is the price?", "$3.99", [State("u", "Price: $3.99")])
    assert v.reward == 1.0 and v.text.startswith("[attempt 2]")
    assert "regex" in asked[0] and "regex" not in asked[1]

    def always_fails(prompt, **kw):
        raise litellm.BadRequestError(message="quota", model="local/x", llm_provider="local")

    monkeypatch.setattr(core.llm, "complete", always_fails)
    with pytest.raises(litellm.BadRequestError):  # a free-text failure is not the grammar's: it still stops
        LLMJudge("local/x", checked=False).evaluate("What is the price?", "$3.99", [State("u", "x")])


def test_test_summary_counts_each_site_and_the_report_shows_them():
    from agents.pae.config import RunConfig
    from agents.pae.loop import build_report
    from agents.pae.nodes.test import summarize

    def row(split, site, ok):
        return {"split": split, "site": site, "oracle_reward": ok, "judge_reward": None, "answer": "x"}

    rows = [row("test", "shop", 1.0), row("test", "shop", 0.0), row("test", "map", 0.0), row("webarena", "map", 1.0)]
    s = summarize(rows)
    assert s["n"] == {"test": 3, "webarena": 1}
    assert s["n_per_site"] == {"test/map": 1, "test/shop": 2, "webarena/map": 1}
    report = build_report("r", RunConfig(), [{"kind": "test", "iteration": 0, **s}])
    (table,) = [t for t in report.tables if t.title == "Test success per site (oracle)"]
    assert [r[1:] for r in table.rows] == [
        ["test/map", 0.0, 0, 1],
        ["test/shop", 0.5, 1, 2],
        ["webarena/map", 1.0, 1, 1],
    ]
    old = {k: v for k, v in s.items() if k != "n_per_site"}  # a record stored before per-site counts
    report = build_report("r", RunConfig(), [{"kind": "test", "iteration": 0, **old}])
    (table,) = [t for t in report.tables if t.title == "Test success per site (oracle)"]
    assert table.rows[1][3:] == ["n/a", 3]
