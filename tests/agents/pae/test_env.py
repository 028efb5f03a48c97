"""The browser environment: Set-of-Marks, the allow-list, and a scripted episode on the local shop."""

from __future__ import annotations

import random

import pytest

from agents.pae.env import NavigationRefused
from agents.pae.evaluator import LLMJudge
from agents.pae.rollout import run_episode
from agents.pae.scripted import ScriptedPolicy
from agents.pae.security import AllowList
from agents.pae.sites import build_sites
from agents.pae.sites.grading import grade
from agents.pae.som import OVERLAY_ID, label_page, remove_labels

pytestmark = pytest.mark.integration

FIXTURE = """<html><body><h1>fixture</h1><button>one</button><input placeholder='two'>
<a href='#x'>three</a><textarea aria-label='four'></textarea><select><option>five</option></select>
<input type='hidden' name='h'><button style='display:none'>invisible</button><p>plain text</p></body></html>"""


def test_som_labels_visible_interactive_elements_and_removes_boxes(env):
    env.reset("/")
    page = env.page
    page.set_content(FIXTURE)
    els = label_page(page)
    assert [e.index for e in els] == [0, 1, 2, 3, 4]
    assert [e.tag for e in els] == ["button", "input", "a", "textarea", "select"]
    assert [e.label for e in els[:4]] == ["one", "two", "three", "four"]
    assert els[0].line() == '[0]: <button> "one"'
    assert page.locator(f"#{OVERLAY_ID} span").all_inner_texts() == ["0", "1", "2", "3", "4"]
    assert page.locator("[data-som='3']").evaluate("e => e.tagName") == "TEXTAREA"
    remove_labels(page)
    assert page.locator(f"#{OVERLAY_ID}").count() == 0


def test_allow_list_unit():
    allow = AllowList.for_sites("http://127.0.0.1:8765", {"example.org"})
    assert allow.allows("http://127.0.0.1:8765/shop/") and allow.allows("http://localhost:8765/")
    assert allow.allows("https://example.org/page")
    for url in (
        "http://127.0.0.1:8000/v1/jobs",
        "http://localhost:5432/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:8765/",
        "file:///etc/passwd",
        "ftp://127.0.0.1:8765/",
        "https://example.com/",
        "data:text/html,<h1>x</h1>",
        "http://127.0.0.1:8765@evil.com/",
    ):
        assert not allow.allows(url), url


def test_environment_refuses_other_hosts(env, sites):
    obs = env.reset("/shop/")
    for url in ("http://127.0.0.1:1/", "http://10.0.0.1/", "http://169.254.169.254/", "https://example.com/"):
        with pytest.raises(NavigationRefused):
            env.goto(url)
    # a page script (or a link) cannot get there either: the request is aborted and the agent told so
    env.page.evaluate(
        "() => { const a = document.createElement('a'); a.href = 'http://127.0.0.1:1/secret';"
        " a.textContent = 'leak'; document.querySelector('main').appendChild(a); }"
    )
    leak = next(e for e in label_page(env.page) if e.text == "leak")
    out = env.step(f"Thought: try it\nAction: Click [{leak.index}]")
    assert "navigation refused" in out.observation.message
    assert out.observation.url.startswith(sites.base_url)
    assert "http://127.0.0.1:1/secret" in env.refused
    assert obs.url.startswith(sites.base_url)


def test_format_error_observation_and_step_cap(env):
    env.config.max_steps = 3
    try:
        env.reset("/dictionary/")
        a = env.step("I think I should look up a word")
        assert a.observation.message.startswith("Format ERROR") and not a.done
        b = env.step("Thought: scroll\nAction: Scroll [WINDOW]; [down]")
        assert not b.done and b.observation.message == ""
        c = env.step("Thought: again\nAction: Click [99]")
        assert c.done and c.answer is None and "no element [99]" in c.observation.message
    finally:
        env.config.max_steps = 10


def test_scripted_episode_on_the_shop(env, tmp_path, scripted_llm):
    site = build_sites(0)["shop"]
    task = next(t for t in site.template_tasks(random.Random(5), 10) if t.template == "cart")
    traj = run_episode(env, ScriptedPolicy(task), task, tmp_path / "ep")
    assert traj.answer is not None and traj.length <= 10 and not traj.timed_out
    assert [s.action.split()[0] for s in traj.steps] == ["Type", "Click", "Click", "ANSWER;"]
    shots = [s.screenshot for s in traj.steps]
    assert all(shots) and len(set(shots)) == traj.length
    assert all((tmp_path / p.split("/")[-1]).stat().st_size > 5000 for p in shots)
    assert "Cart total" in traj.steps[-1].page_text
    assert grade(task.reference, traj.answer) == 1.0
    prov = scripted_llm("ep-judge", ["The cart shows the total. SUCCESS"])
    v = LLMJudge("scripted/ep-judge").evaluate(task.question, traj.answer, traj.last_states())
    assert v.reward == 1.0 and len(prov.calls["ep-judge"]) == 1
    assert prov.calls["ep-judge"][0][-1]["content"].count("[state ") == 3
