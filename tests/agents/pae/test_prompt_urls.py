"""The models' prompts carry no trace of the local sites' random port (it made two runs of one seed differ)."""

from __future__ import annotations

from agents.pae.env import Observation
from agents.pae.evaluator import State
from agents.pae.policy import build_messages
from agents.pae.som import Element, shown_url


def _obs(port: int) -> Observation:
    return Observation(
        url=f"http://127.0.0.1:{port}/dictionary/word?q=apple#top",
        title="Dictionary",
        elements=[Element(index=0, tag="input", aria="Search")],
        page_text="Look up a word.",
    )


def test_loopback_port_is_dropped_and_everything_else_kept():
    assert shown_url("http://127.0.0.1:60479/dictionary/word?q=a#x") == "http://127.0.0.1/dictionary/word?q=a#x"
    assert shown_url("https://localhost:8443/") == "https://localhost/"
    assert shown_url("http://[::1]:9000/a") == "http://[::1]/a"
    for unchanged in ("http://example.org:8080/a", "http://10.0.0.1:5000/", "about:blank", "http://127.0.0.1/x", ""):
        assert shown_url(unchanged) == unchanged


def test_policy_prompt_is_the_same_on_any_port():
    a = build_messages("Define apple", _obs(60479), "", compact=True)
    b = build_messages("Define apple", _obs(41217), "", compact=True)
    assert a == b
    assert "URL: http://127.0.0.1/dictionary/word?q=apple#top" in a[-1]["content"]
    assert "60479" not in a[-1]["content"]


def test_judge_state_is_the_same_on_any_port():
    one = State("http://localhost:60479/shop/item/3", "Price $3.99").describe()
    two = State("http://localhost:41217/shop/item/3", "Price $3.99").describe()
    assert one == two and one.startswith("URL: http://localhost/shop/item/3\n")
