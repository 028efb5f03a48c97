"""The AVeriTeC scorer against the spec's worked examples (§7 "Evaluation") and NLTK's own METEOR."""

from __future__ import annotations

import json

import pytest

from methods.averitec_eval.meteor import meteor_tokens, pairwise_meteor
from methods.averitec_eval.metrics import label_metrics
from methods.averitec_eval.nltk_data import ensure_nltk_data
from methods.averitec_eval.scorer import evidence_strings, hungarian_utility, score


@pytest.fixture(scope="module")
def nltk_root(tmp_path_factory):
    return ensure_nltk_data(tmp_path_factory.mktemp("nltk") / "nltk_data")


def ws(s: str) -> list[str]:
    return s.split()


def test_nltk_doctest_vector_and_no_match(nltk_root):
    hyp = ("It is a guide to action which ensures that the military always obeys the commands of the party").split()
    ref = "It is a guide to action that ensures that the military will forever heed Party commands".split()
    assert round(meteor_tokens(ref, hyp), 4) == 0.6944
    assert meteor_tokens(ws("this is a cat"), ws("non matching hypothesis")) == 0.0


def test_worked_examples(nltk_root):
    assert round(meteor_tokens(ws("the cat sat on the mat"), ws("the cat sat")), 6) == 0.448343
    seven = ws("who made the claim a facebook post")
    assert round(meteor_tokens(seven, seven), 6) == 0.998542
    nine = ws("a b c d e f g h i".replace(" ", " "))
    assert round(meteor_tokens(nine, nine), 6) == 0.999314

    def metric(c, r):
        return meteor_tokens(ws(r), ws(c))

    gold = ["who made the claim a facebook post", "when did the bridge open in 1932"]
    pred = ["who made the claim a facebook post", "when did the bridge open 1932"]
    assert round(metric(pred[1], gold[1]), 6) == 0.853462
    assert round(hungarian_utility(pred, gold, metric), 6) == 0.926002
    gold_questions = ["who made the claim", "when did the bridge open"]
    q = hungarian_utility(["who made the claim", "when did the bridge open"], gold_questions, metric)
    assert round(q, 6) == 0.994094
    gold_b = ["alpha beta gamma", "one two three four five six seven eight nine", "x y z"]
    assert round(hungarian_utility([gold_b[1]], gold_b, metric), 6) == 0.333105
    assert hungarian_utility(["capital france paris"], ["wyoming population 576851"], metric) == 0.0


def test_averitec_score_levels_on_claims_a_b_c(nltk_root):
    gold_a = {
        "label": "Refuted",
        "justification": "x",
        "claim_types": ["Event/Property Claim"],
        "questions": [
            {"question": "who made the claim", "answers": [{"answer": "a facebook post", "answer_type": "Extractive"}]},
            {"question": "when did the bridge open", "answers": [{"answer": "in 1932", "answer_type": "Extractive"}]},
        ],
    }
    pred_a = {
        "label": "Refuted",
        "questions": [
            {"question": "who made the claim", "answers": [{"answer": "a facebook post"}]},
            {"question": "when did the bridge open", "answers": [{"answer": "1932"}]},
        ],
    }
    gold_b = {
        "label": "Supported",
        "justification": "y",
        "questions": [
            {"question": "alpha", "answers": [{"answer": "beta gamma"}]},
            {"question": "one two three four", "answers": [{"answer": "five six seven eight nine"}]},
            {"question": "x", "answers": [{"answer": "y z"}]},
        ],
    }
    pred_b = {
        "label": "Supported",
        "questions": [{"question": "one two three four", "answers": [{"answer": "five six seven eight nine"}]}],
    }
    gold_c = {
        "label": "Not Enough Evidence",
        "justification": "z",
        "questions": [{"question": "wyoming population", "answers": [{"answer": "576851"}]}],
    }
    pred_c = {
        "label": "Not Enough Evidence",
        "questions": [{"question": "capital france", "answers": [{"answer": "paris"}]}],
    }
    s = score([pred_a, pred_b, pred_c], [gold_a, gold_b, gold_c], metric=lambda c, r: meteor_tokens(ws(r), ws(c)))
    assert [round(s.averitec[lvl], 4) for lvl in (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)] == [
        0.6667,
        0.6667,
        0.6667,
        0.6667,
        0.3333,
        0.3333,
    ]
    assert s.veracity["acc"] == 1.0
    assert round(s.per_claim[0]["qa"], 6) == 0.926002 and round(s.per_claim[1]["qa"], 6) == 0.333105


def test_macro_f1_worked_example():
    m = label_metrics(["R", "R", "S", "N", "C"], ["R", "S", "S", "N", "R"])
    assert round(m["macro_f1"], 6) == 0.541667 and m["accuracy"] == 0.6
    assert m["per_class"]["C"]["f1"] == 0.0 and round(m["per_class"]["S"]["f1"], 4) == 0.6667


def test_refusals_leave_the_accuracy_denominator():
    m = label_metrics(["a", "b", "a"], ["a", "error: refused to answer", "b"])
    assert m["accuracy"] == 0.5 and m["refused"] == 1 and round(m["accuracy_all"], 4) == 0.3333


def test_gold_strings_and_prediction_cap():
    gold = {
        "questions": [
            {
                "question": "Q1",
                "answers": [{"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "it did"}],
            },
            {"question": "Q2", "answers": []},
        ]
    }
    assert evidence_strings(gold, is_gold=True) == ["Q1 Yes. it did", "Q2 No answer could be found."]
    pred = {"evidence": [{"question": f"q{i}", "answer": None if i == 0 else f"a{i}"} for i in range(14)]}
    strings = evidence_strings(pred, is_gold=False)
    assert len(strings) == 10 and strings[0] == "q1 a1"


def test_matches_nltk_meteor_on_real_averitec_strings(nltk_root, data_dir):
    """Our METEOR equals NLTK's single_meteor_score (the official scorer's) on real dev strings, stems and
    WordNet synonyms included."""
    from nltk import word_tokenize
    from nltk.translate.meteor_score import single_meteor_score

    claims = json.loads((data_dir / "averitec" / "dev.json").read_text())[:12]
    strings = [s for c in claims for s in evidence_strings(c, is_gold=True)][:24]
    pairs = [(strings[i], strings[j]) for i in range(0, len(strings) - 1, 2) for j in (i + 1, (i + 5) % len(strings))]
    pairs += [("The runners were running quickly", "A runner runs fast"), ("my car", "my auto")]
    for cand, ref in pairs:
        ours = pairwise_meteor(cand, ref)
        theirs = single_meteor_score(word_tokenize(ref), word_tokenize(cand))
        assert ours == pytest.approx(theirs, abs=1e-12), (cand, ref)
    assert pairwise_meteor("car", "auto") > 0.4  # the synonym stage is live (WordNet loaded)
