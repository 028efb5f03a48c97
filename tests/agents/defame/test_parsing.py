"""Stage contracts that need no graph: action parsing, verdict extraction, labels, report layout (spec §7)."""

from __future__ import annotations

from agents.defame.document import render_document
from agents.defame.labels import Label, get_benchmark
from agents.defame.nodes.plan import dedupe
from agents.defame.parsing import Action, extract_verdict, parse_actions

KNOWN = {"web_search", "geolocate", "image_search", "reverse_search"}


def test_check1_last_code_block_unknown_dropped_and_reasoning():
    text = 'I will search.\n```\nweb_search("a b")\ngeolocate(<image:3>)\nfoo("x")\n```'
    actions, reasoning = parse_actions(text, KNOWN)
    assert actions == [Action("web_search", "a b"), Action("geolocate", "<image:3>")]
    assert reasoning == "I will search."
    eight = "```\n" + "\n".join(f'web_search("q{i}")' for i in range(8)) + "\n```"
    assert [a.argument for a in parse_actions(eight, KNOWN)[0]] == ["q0", "q1", "q2", "q3", "q4"]
    prose, _ = parse_actions('Let me run web_search("q") now.', KNOWN)
    assert prose == [Action("web_search", "q")]
    earlier = '```\nweb_search("old")\n```\nthen\n```\nimage_search("new")\n```'
    assert parse_actions(earlier, KNOWN)[0] == [Action("image_search", "new")]


def test_check2_duplicates_removed_and_all_duplicates_give_nothing():
    performed = [{"name": "web_search", "argument": "a b"}]
    proposed = [Action("web_search", "A B"), Action("web_search", "c"), Action("web_search", "c")]
    assert dedupe(proposed, performed, []) == [Action("web_search", "c")]
    assert dedupe([Action("web_search", "a b")], performed, []) == []
    # An exemplar's <image:k> is replaced by the claim's first image.
    assert dedupe([Action("geolocate", "<image:9>")], [], ["1", "2"]) == [Action("geolocate", "<image:1>")]


def test_check3_verdict_extraction_fallbacks():
    allowed = [Label.SUPPORTED, Label.REFUTED, Label.NEI]
    assert extract_verdict("Insights... so the claim is `Refuted`.", allowed) == Label.REFUTED
    assert extract_verdict("It is **supported** by both sources", allowed) == Label.SUPPORTED
    assert extract_verdict("There is not enough information to decide.", allowed) == Label.NEI
    assert extract_verdict("`out of context`", allowed) is None
    assert extract_verdict("`supported` at first, but finally `refuted`", allowed) == Label.REFUTED
    assert extract_verdict("Nothing useful here.", allowed) is None


def test_check4_nei_only_in_non_final_judgements():
    verite = get_benchmark("verite")
    assert Label.NEI in verite.allowed_labels(is_final=False)
    assert Label.NEI not in verite.allowed_labels(is_final=True)
    assert Label.NEI in get_benchmark("mocheg").allowed_labels(is_final=True)


def test_check8_label_mapping():
    av = get_benchmark("averitec")
    assert av.dataset_label(Label.CHERRY_PICKING) == "Conflicting Evidence/Cherrypicking"
    assert av.dataset_label(Label.CONFLICTING) == "Conflicting Evidence/Cherrypicking"
    assert av.dataset_label(Label.NEI) == "Not Enough Evidence"
    assert av.dataset_label(Label.REFUSED) == "error: refused to answer"
    verite = get_benchmark("verite")
    assert verite.gold_label("miscaptioned") == Label.OUT_OF_CONTEXT == verite.gold_label("out-of-context")
    assert verite.gold_label("true") == Label.SUPPORTED
    assert get_benchmark("mocheg").dataset_label(Label.NEI) == "NEI"


GOLDEN = """## Claim
Claim: "<image:1> The bridge opened in 1952."
Author: A. Blogger
Date: March 01, 2021

The planner thinks two searches are enough here.

## Actions
```
web_search("bridge opening")
geolocate(<image:1>)
```

## Evidence
### Evidence from `web_search`
It opened in 1937 [Source](https://x.org).
### Evidence from `geolocate`
EXIF GPS metadata of <image:1>: latitude 1.0, longitude 2.0.

## Elaboration
1937, not 1952.

## Actions
```
web_search("second query")
```

## Evidence
No new evidence found.

## Elaboration
Nothing new.

## Final Judgement
Key insight.
So `refuted`.

### Verdict: REFUTED

### Justification
Sources say 1937."""


def test_check7_report_layout_golden():
    state = {
        "claim": {
            "text": "<image:1> The bridge opened in 1952.",
            "author": "A. Blogger",
            "date": "2021-03-01",
            "images": {"1": "/x.png"},
        },
        "record": [
            {"kind": "reasoning", "text": "The planner thinks two searches are enough here."},
            {
                "kind": "actions",
                "actions": [
                    {"name": "web_search", "argument": "bridge opening"},
                    {"name": "geolocate", "argument": "<image:1>"},
                ],
            },
            {
                "kind": "evidence",
                "items": [
                    {
                        "action": {"name": "web_search", "argument": "bridge opening"},
                        "summary": "It opened in 1937 [Source](https://x.org).",
                        "sources": [],
                    },
                    {
                        "action": {"name": "geolocate", "argument": "<image:1>"},
                        "summary": "EXIF GPS metadata of <image:1>: latitude 1.0, longitude 2.0.",
                        "sources": [],
                    },
                ],
            },
            {"kind": "reasoning", "text": "## Elaboration\n1937, not 1952."},
            {"kind": "actions", "actions": [{"name": "web_search", "argument": "second query"}]},
            {
                "kind": "evidence",
                "items": [
                    {"action": {"name": "web_search", "argument": "second query"}, "summary": None, "sources": []}
                ],
            },
            {"kind": "reasoning", "text": "## Elaboration\nNothing new."},
            {"kind": "reasoning", "text": "## Final Judgement\nKey insight.\nSo `refuted`."},
        ],
        "label": "refuted",
        "final": True,
        "justification": "Sources say 1937.",
    }
    assert render_document(state) == GOLDEN
