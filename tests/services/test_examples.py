"""Getting started: one example per method of the README's table (19), each validating against its params model
and within the one-minute budget measured on this machine (issue #47)."""

from __future__ import annotations

import re
from pathlib import Path

from services.examples import EXAMPLES, MAX_SECONDS, examples

README = Path(__file__).resolve().parents[2] / "README.md"
NOT_METHODS = ("Vision-language substrate", "local LLM")  # substrates in the table, not papers


def _readme_methods() -> list[str]:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| method | package |") :].split("\n\n")[0]
    rows = [r for r in table.splitlines()[2:] if r.startswith("|")]
    names = [r.split("|")[1].strip() for r in rows]
    return [n for n in names if not n.startswith(NOT_METHODS)]


def test_one_example_for_each_method_of_the_readme():
    methods = _readme_methods()
    assert len(methods) == 19, methods
    papers = [e.paper for e in EXAMPLES if e.paper]
    assert len(papers) == len(set(papers)) == 19, papers
    for m in methods:
        matched = [p for p in papers if re.match(re.escape(p) + r"\b", m)]
        assert len(matched) == 1, f"README method {m!r}: examples {matched}"


def test_every_example_validates_is_registered_and_fits_the_budget():
    from core.jobs import get_method, load_all

    load_all()
    assert [e.name for e in examples()] == [e.name for e in EXAMPLES]  # every method is registered here
    for e in EXAMPLES:
        get_method(e.method).validate(e.params)
        assert 0 < e.seconds <= MAX_SECONDS, e
        # over the budget only once, while a model is trained and cached, and then the example says so
        assert e.first_use == 0 or ("first use" in e.about and str(e.first_use) in e.about), e
        assert e.about and e.title


def test_the_api_lists_them_with_their_method(api_client):
    listed = api_client.get("/v1/examples").json()
    assert [x["name"] for x in listed] == [e.name for e in EXAMPLES]
    assert {x["paper"] for x in listed if x["paper"]} == {e.paper for e in EXAMPLES if e.paper}
