"""The action grammar and reply format of spec §3.2."""

from __future__ import annotations

import re

import pytest

from agents.pae.actions import REPLY_REGEX, Action, FormatError, parse_action, parse_reply


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Click [12]", Action("click", 12)),
        ("click 3", Action("click", 3)),
        ("Type [4]; [red kettle]", Action("type", 4, "red kettle")),
        ("TYPE [0]; hello world", Action("type", 0, "hello world")),
        ("Scroll [WINDOW]; [down]", Action("scroll", -1, "down")),
        ("Scroll [7]; [up]", Action("scroll", 7, "up")),
        ("Wait", Action("wait")),
        ("GoBack", Action("goback")),
        ("Google", Action("google")),
        ("ANSWER; Paris", Action("answer", None, "Paris")),
        ("ANSWER; [Paris]", Action("answer", None, "Paris")),
        ("answer; [$12.99 ]", Action("answer", None, "$12.99")),
    ],
)
def test_every_form_parses(text, expected):
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Click",
        "Click [x]",
        "Type [3]",
        "Type [3]; []",
        "Scroll [WINDOW]; [left]",
        "ANSWER;",
        "Jump [2]",
        "",
        "Press Enter",
    ],
)
def test_malformed_actions_are_format_errors(text):
    out = parse_action(text)
    assert isinstance(out, FormatError) and out.message.startswith("Format ERROR")


def test_reply_needs_thought_and_action():
    ok = parse_reply("Thought: search first.\nAction: Type [1]; [Blue Kettle]\n")
    assert ok.thought == "search first." and ok.action == Action("type", 1, "Blue Kettle")
    for bad in ("Action: Click [1]", "Thought: hmm", "I will click 2", "Action: Click [1]\nThought: late"):
        r = parse_reply(bad)
        assert isinstance(r.action, FormatError) and "Both 'Thought' and 'Action'" in r.action.message


def test_render_round_trips():
    for a in (
        Action("click", 2),
        Action("type", 1, "x y"),
        Action("scroll", -1, "down"),
        Action("scroll", 3, "up"),
        Action("wait"),
        Action("goback"),
        Action("google"),
        Action("answer", None, "42"),
    ):
        assert parse_action(a.render()) == a


def test_constraint_regex_accepts_canonical_replies_only():
    assert re.fullmatch(REPLY_REGEX, "Thought: go\nAction: Type [2]; [Smart Kettle]")
    assert re.fullmatch(REPLY_REGEX, "Thought: done\nAction: ANSWER; [$42.99]")
    assert not re.fullmatch(REPLY_REGEX, "Thought: go\nAction: Jump [2]")
    assert not re.fullmatch(REPLY_REGEX, "Action: Click [2]")
