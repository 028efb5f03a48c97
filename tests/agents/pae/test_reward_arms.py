"""Issue #26's reward arms: the judge's inputs and retries, the count-matched random control, the constrained
proposer, and whole-template hold-out."""

from __future__ import annotations

import json
import random

from agents.pae.config import PRESETS, RunConfig
from agents.pae.evaluator import LLMJudge, State, random_rewards
from agents.pae.proposer import LLMProposer, TemplateProposer, format_errors, heldout_templates, site_templates
from agents.pae.sites import build_sites


def test_llm_judge_is_the_default_reward_and_thinks_256_tokens():
    cfg = RunConfig()
    assert cfg.reward == "llm" and cfg.judge_max_tokens >= 256 and cfg.judge_retries >= 1
    assert all(p["judge_max_tokens"] >= 256 for p in PRESETS.values())
    assert PRESETS["issue-1.5b"]["judge_model"] == "local/qwen2.5-coder-1.5b-instruct"


def test_tests_sample_as_the_paper_unless_greedy_is_asked():
    from agents.pae.report import _setup_text

    cfg = RunConfig()
    assert cfg.test_temperature == cfg.temperature == 1.0
    assert "Tests sample at T = 1.0" in _setup_text(cfg, "small")
    assert "Tests are greedy" in _setup_text(RunConfig(test_temperature=0.0), "small")


def test_judge_sees_the_element_table_and_retries_unparsable_replies(scripted_llm):
    prov = scripted_llm("judge-retry", ["Let me think about the page.", "The price is there. SUCCESS"])
    table = "[3] button 'Add to cart'\n[4] link 'Reviews (12)'"
    judge = LLMJudge("scripted/judge-retry")
    v = judge.evaluate("What is the price?", "$3.99", [State("http://x/p", "Price $3.99", table)])
    assert v.reward == 1.0 and v.text.startswith("[attempt 2]")
    first, second = prov.calls["judge-retry"]
    assert "[4] link 'Reviews (12)'" in first[-1]["content"]
    assert "SUCCESS or NOT SUCCESS" in second[-1]["content"] and judge.unparsable == 0
    prov = scripted_llm("judge-never", ["hmm"] * 3)
    judge = LLMJudge("scripted/judge-never", retries=2)
    v = judge.evaluate("t", "a", [State("u", "p")])
    assert v.reward == 0.0 and judge.unparsable == 1 and len(prov.calls["judge-never"]) == 3


def test_random_control_has_exactly_the_judge_count_on_answered_trajectories():
    answered = [f"t{i}" for i in range(10)]
    r = random_rewards(answered, 4, "0:1")
    assert sum(r.values()) == 4 and set(r) == set(answered)
    assert random_rewards(answered, 4, "0:1") == r, "seeded"
    assert random_rewards(answered, 4, "0:2") != r
    assert sum(random_rewards(answered[:2], 5, "x").values()) == 2  # capped by the answered trajectories
    assert sum(random_rewards(answered, 0, "x").values()) == 0


def test_whole_templates_are_held_out():
    sites = build_sites(0)
    for name in ("shop", "recipes", "dictionary", "map"):
        site = sites[name]
        held = heldout_templates(site, 1, seed=0)
        assert len(held) == 1 and held[0] in site_templates(site)
        practised = [t for t in site_templates(site) if t not in held]
        train = TemplateProposer().propose(site, 12, random.Random(1), templates=practised)
        test = TemplateProposer().propose(site, 4, random.Random(2), templates=held)
        assert train and test
        assert {t.template for t in train}.isdisjoint({t.template for t in test})
        assert {t.template for t in test} == set(held)


def test_constrained_proposer_asks_for_the_schema_and_parses_json(scripted_llm):
    site = build_sites(0)["shop"]
    reply = json.dumps(
        {
            "tasks": [
                {"web_name": "shop", "id": "shop--1", "ques": "What is the price of the blue kettle?", "web": "/shop/"}
            ]
        }
    )
    prov = scripted_llm("prop-json", [reply])
    prop = LLMProposer(model="scripted/prop-json", max_tokens=64, constrained=True)
    tasks = prop.propose(site, 2, seed=0)
    assert [t.question for t in tasks] == ["What is the price of the blue kettle?"] and tasks[0].proposer == "llm"
    assert len(prov.calls["prop-json"]) == 1
    bad, total = format_errors(
        'Thinking...\nOutput:\n{"web_name": "shop", "ques": "ok question here"}\n{broken\nplain text'
    )
    assert (bad, total) == (2, 3)


def test_local_model_under_the_schema_writes_valid_tasks():
    """The 135M model writes malformed JSONL unconstrained; under the schema every task parses."""
    site = build_sites(0)["recipes"]
    prop = LLMProposer(model="local/smollm2-135m-instruct", max_tokens=200, temperature=1.0, constrained=True)
    tasks = prop.propose(site, 2, seed=3)
    raw = json.loads(prop.raw_replies[-1])
    # as many tasks as asked for (under "1 to n" the 1.5B stopped after one task in every reply)
    assert len(raw["tasks"]) == 2
    assert all(t["web_name"] == "recipes" and t["web"] == "/recipes/" for t in raw["tasks"])
    assert all(t.site == "recipes" for t in tasks)


def test_judge_probe_pairs_right_and_wrong_answers(chromium_path, scripted_llm):
    from agents.pae.judge_probe import judge_agreement, probe_cases

    cases = probe_cases(["shop"], 2, seed=0, same_template=True)
    assert [c.kind for c in cases] == ["right", "other task", "same template"] * 2
    assert [c.oracle for c in cases] == [1.0, 0.0, 0.0] * 2
    assert all(c.states and c.states[-1].element_table for c in cases)

    right = {(c.question, c.answer) for c in cases if c.oracle}

    def knows_the_answers(messages):  # a perfect judge: the plumbing must then give kappa 1
        user = messages[-1]["content"]
        q = user.split("TASK: ", 1)[1].split("\n", 1)[0].strip()
        a = user.split("Result Response: ", 1)[1].split("\n", 1)[0].strip()
        return "Confirmed by the states. SUCCESS" if (q, a) in right else "NOT SUCCESS"

    scripted_llm("probe-judge", knows_the_answers)
    row = judge_agreement(cases, "scripted/probe-judge")
    assert row["n"] == 6 and row["kappa"] == 1.0 and row["unparsable"] == 0
    assert row["success_rate_by_kind"] == {"right": 1.0, "other task": 0.0, "same template": 0.0}
    assert row["kappa_ci"] == (1.0, 1.0)  # a perfect judge stays perfect in every resample
    assert row["prompt_version"] >= 5 and row["checked"] is False  # scripted models answer in free text


def test_local_judge_is_constrained_to_the_check_lines_on_its_first_attempt(monkeypatch):
    import re
    from types import SimpleNamespace

    import core.llm
    from agents.pae.evaluator import check_format, page_lines, verdict_reward

    lines = ["Golden Yo-Yo", "Price: $3.99 (tax)", "Brand: Stark"]
    fmt = check_format("It costs $3.99", lines)
    good = "Asked: the price\nResponse says: It costs $3.99\nPage shows: Price: $3.99 (tax)\nAnswers: yes\nVerdict: SUCCESS"
    assert re.fullmatch(fmt, good) and verdict_reward(good) == 1.0
    assert verdict_reward(good.replace("yes\nVerdict: SUCCESS", "no\nVerdict: NOT SUCCESS")) == 0.0
    assert re.fullmatch(fmt, good.replace("Price: $3.99 (tax)", "nothing"))
    # the answer is copied as given (the 1.5B copied the page's value instead) ...
    assert not re.fullmatch(fmt, good.replace("says: It costs $3.99", "says: $3.99"))
    # ... the page line is one of the states' lines (it copied URLs) ...
    assert not re.fullmatch(fmt, good.replace("Price: $3.99 (tax)", "http://x/p"))
    # ... and the shortcut local models took without the constraint does not fit
    assert not re.fullmatch(fmt, "Answers: yes\nVerdict: SUCCESS")
    states = [State("u1", "Shop\nSearch"), State("u2", "Golden Yo-Yo\nPrice: $3.99\n\nSearch")]
    assert page_lines(states) == ["Golden Yo-Yo", "Price: $3.99", "Search", "Shop"]  # last state first, distinct
    seen: list[dict] = []
    replies = iter(["I am not sure.", "The page shows it. SUCCESS"])

    def fake_complete(prompt, **kw):
        seen.append(kw)
        return SimpleNamespace(text=next(replies))

    monkeypatch.setattr(core.llm, "complete", fake_complete)
    v = LLMJudge("local/some-model", retries=1).evaluate("What is the price?", "$3.99", [State("u", "Price $3.99")])
    assert v.reward == 1.0 and v.text.startswith("[attempt 2]")
    assert seen[0]["regex"] == check_format("$3.99", ["Price $3.99"]) and "regex" not in seen[1]  # a retry is free text
    seen.clear()
    replies = iter(["Same: yes. SUCCESS"])
    assert LLMJudge("openai/gpt-4o").evaluate("q", "a", [State("u", "p")]).reward == 1.0
    assert "regex" not in seen[0]  # hosted models answer in free text


def test_kappa_interval_brackets_the_estimate_and_shrinks_with_cases():
    from agents.pae.evaluator import agreement
    from agents.pae.judge_probe import kappa_ci

    small = [(1.0, 1.0), (0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0), (0.0, 1.0)] * 2
    lo, hi = kappa_ci(small)
    k = agreement(small)["kappa"]
    assert lo <= k <= hi and hi - lo > 0.3
    lo4, hi4 = kappa_ci(small * 8)
    assert lo4 <= k <= hi4 and (hi4 - lo4) < (hi - lo)


def test_proposer_probe_counts_format_errors_and_valid_tasks(scripted_llm, tmp_path):
    """`paperworks pae proposer-probe`: the free-text reply's malformed lines and the valid tasks of both decodings."""
    from typer.testing import CliRunner

    from agents.pae.proposer_probe import summarise
    from services.cli.main import app

    good = json.dumps(
        {"web_name": "shop", "id": "shop--1", "ques": "What is the price of the blue kettle?", "web": "/"}
    )
    wrong_site = json.dumps({"web_name": "github", "id": "x", "ques": "Star the paperworks repository", "web": "/"})
    free = f"I will think first.\nOutput:\n{good}\n{{broken json\nHere are more tasks:\n{wrong_site}"
    schema = json.dumps(
        {
            "tasks": [
                # a demo of the shop site: dropped as a duplicate
                {"web_name": "shop", "id": "shop--1", "ques": "Which brand makes the green tent?", "web": "/shop/"},
                {"web_name": "shop", "id": "shop--2", "ques": "How many toys cost under $20?", "web": "/shop/"},
            ]
        }
    )
    prov = scripted_llm("probe-prop", [free, schema, free, schema])
    out = tmp_path / "probe.json"
    res = CliRunner().invoke(
        app,
        ["pae", "proposer-probe", "-m", "scripted/probe-prop", "--site", "shop", "--requests", "2", "--tasks", "3"]
        + ["--json", str(out)],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert [(r["decoding"], r["request"]) for r in rows] == [
        ("free text", 0),
        ("JSON schema", 0),
        ("free text", 1),
        ("JSON schema", 1),
    ]
    free_rows = [r for r in rows if r["decoding"] == "free text"]
    # 4 task-like lines after Output: the good task, the broken line, the prose line, the unknown site (well-formed)
    assert all((r["format_errors"], r["lines"], r["valid"]) == (2, 4, 1) for r in free_rows)
    summary = {s["decoding"]: s for s in summarise(rows)}
    assert summary["free text"]["format_error_rate"] == 0.5 and summary["free text"]["valid"] == 2
    assert summary["JSON schema"]["valid"] == 2 and summary["JSON schema"]["format_errors"] == 0
    assert summary["JSON schema"]["asked"] == 6 and 0 < summary["JSON schema"]["valid_ci"][0] < 2 / 6
    assert "free text" in res.output and "2/4 lines malformed" in res.output
    assert len(prov.calls["probe-prop"]) == 4
    bad = CliRunner().invoke(app, ["pae", "proposer-probe", "-m", "scripted/probe-prop", "--site", "github"])
    assert bad.exit_code == 2 and "unknown site" in bad.output


def test_schema_asks_for_exactly_n_tasks_and_a_cut_reply_keeps_its_whole_tasks(scripted_llm):
    from agents.pae.proposer import task_schema

    arr = task_schema("shop", "/shop/", 5)["properties"]["tasks"]
    assert arr["minItems"] == arr["maxItems"] == 5
    done = {"web_name": "shop", "id": "shop--1", "ques": "What is the price of the blue kettle?", "web": "/shop/"}
    cut = '{"tasks": [' + json.dumps(done) + ', {"web_name": "shop", "id": "shop--2", "ques": "How many to'
    scripted_llm("prop-cut", [cut])
    tasks = LLMProposer(model="scripted/prop-cut", max_tokens=64, constrained=True).propose(build_sites(0)["shop"], 2)
    assert [t.question for t in tasks] == ["What is the price of the blue kettle?"]
