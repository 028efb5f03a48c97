"""Spec §7 unit checks of MultiCogEval's scoring: normalisation, MR weighting, extractors, MCQ patterns."""

import random

import pytest

from methods.medcog.extract import extract_ae, extract_mcq, extract_mr, extract_sv
from methods.medcog.scoring import chance, mr_item_score, normalise, score_task


def test_normalisation_constants():
    assert normalise(0.6, chance("medqa", "MCQ")) == pytest.approx(0.5)
    assert normalise(0.75, chance("medqa", "SV")) == pytest.approx(0.5)
    assert normalise(0.25, chance("medmcqa", "MCQ")) == pytest.approx(0.0)
    assert chance("medqa", "MR") == 0.2 and chance("medmcqa", "MR") == 0.25 and chance("medmcqa", "AE") == 0.5


def test_mr_weighting():
    rng = random.Random(0)
    right = extract_mr(" correct", "E", rng)
    wrong = extract_mr(" incorrect, the correct answer is E", "C", rng)
    assert right == ("T", None) and wrong == ("F", "E")
    assert mr_item_score("medqa", right, wrong, "E") == pytest.approx(1.0)
    missed = ("F", "B")  # judged incorrect but corrected to the wrong letter
    assert mr_item_score("medqa", right, missed, "E") == pytest.approx(0.2)
    assert mr_item_score("medmcqa", right, missed, "E") == pytest.approx(0.25)
    assert mr_item_score("medqa", ("F", "A"), ("T", "C"), "E") == 0.0


def test_mr_unparsable_output_is_padded_never_the_gold_by_construction():
    rng = random.Random(1)
    for _ in range(50):
        verdict, letter = extract_mr("I am not sure", "C", rng)
        assert (verdict, letter) in {("T", "C")} or (verdict == "F" and letter != "C")


def test_ae_and_sv_extractors():
    rng = random.Random(0)
    assert extract_ae("Yes.", rng) == 1
    assert extract_ae("no, because the options miss it", rng) == 0
    assert extract_ae("The answer: yes", rng) == 1
    assert extract_sv("True") == "T"
    assert extract_sv("The statement is false") == "F"
    assert extract_sv("The statement is correct.") == "T"
    assert extract_sv("hmm") is None


def test_mcq_extractor_patterns_and_option_text():
    rng = random.Random(0)
    opts = {"Aspirin": "A", "Heparin": "B"}
    assert extract_mcq(" C", opts, rng) == "C"
    assert extract_mcq("D. Because it is", opts, rng) == "D"
    assert extract_mcq("The correct answer is E", opts, rng) == "E"
    assert extract_mcq("Heparin", opts, rng) == "B"  # option text → its letter
    assert extract_mcq("B\n\nAnswer: A", opts, rng) == "B"  # only before the first blank line


def test_score_task_averages_variants_then_runs():
    item = (7, "Question: q Alice's answer: A.", "Question: q Alice's answer: B.", ["T", "A"], ["F", "A"])
    outputs = {7: [[" correct", " incorrect, the correct answer is A"], [" correct", " correct"]]}
    s = score_task("medqa", "MR", [item], outputs)
    assert s.run_acc == pytest.approx([1.0, 0.2])
    assert s.norm == pytest.approx((0.6 - 0.2) / 0.8)
    assert s.norm_se == pytest.approx(s.acc_se / 0.8)


def test_parsable_flags_outputs_that_fall_to_padding():
    from methods.medcog.extract import parsable

    assert parsable("MCQ", " C") and not parsable("MCQ", "I think it is the second option")
    assert parsable("AE", "Yes.") and not parsable("AE", "C: Increased Aa gradient")
    assert parsable("MR", " incorrect, the correct answer is E") and not parsable("MR", "C")
    assert parsable("SV", "False") and not parsable("SV", "hmm")


def test_score_task_keeps_each_items_parsed_share_and_its_score_on_read_answers_only():
    """Issue #49: a random guess must not count as an answer. Item 1's two outputs are read, item 2's first is
    a guess (padding) and its second is read; item 3 is never read. The padded scores are unchanged."""
    items = [
        (1, "Q1 Options: A: x\tB: y", "C"),
        (2, "Q2 Options: A: x\tB: y", "A"),
        (3, "Q3 Options: A: x\tB: y", "B"),
    ]
    outputs = {1: [[" C"], [" B"]], 2: [["no idea"], [" A"]], 3: [["hmm"], ["what"]]}
    s = score_task("medqa", "MCQ", items, outputs)
    by = {x["idx"]: x for x in s.per_item}
    assert by[1]["parsed"] == 1.0 and by[1]["norm_parsed"] == pytest.approx(normalise(0.5, 0.2))
    assert by[2]["parsed"] == 0.5 and by[2]["norm_parsed"] == pytest.approx(normalise(1.0, 0.2))
    assert by[3]["parsed"] == 0.0 and by[3]["norm_parsed"] is None
    assert s.unparsed == pytest.approx(3 / 6)
    # the padded score draws from random.Random(48) exactly as before (item_scores, the reference's rule)
    from methods.medcog.scoring import item_scores

    rng = random.Random(48)
    runs = [[v for it in items for v in item_scores("medqa", "MCQ", it, outputs[it[0]][r], rng)] for r in range(2)]
    assert s.run_acc == pytest.approx([sum(x) / 3 for x in runs])
    assert by[2]["norm"] == pytest.approx(normalise((runs[0][1] + runs[1][1]) / 2, 0.2))


def test_an_option_text_answer_is_read_not_guessed():
    """The MCQ reader replaces an option's text by its letter: such an output is read, whatever the patterns say."""
    items = [(4, "Q Options: A: Aspirin\tB: Heparin", "B")]
    s = score_task("medqa", "MCQ", items, {4: [["Heparin is the drug"], ["Heparin"]]})
    assert s.per_item[0]["parsed"] == 1.0 and s.per_item[0]["norm_parsed"] == pytest.approx(1.0) and s.unparsed == 0
