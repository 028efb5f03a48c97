"""Spec §7: the level classifier table and the ecological-validity property."""

import pytest

from methods.ecolevels.classify import classify
from methods.ecolevels.registry import ProbeMetadata, load_probes
from methods.ecolevels.validity import LETTER_ASSISTANT, RESUME_SCREENER, band, ecological_validity

SEED = {p.id: p for p in load_probes(from_db=False)}


def meta(**kw):
    base = dict(
        observes="generation",
        asks_about_group=False,
        individual_target=False,
        group_signal="name",
        output_format="forced_choice",
    )
    return ProbeMetadata(**(base | kw))


@pytest.mark.parametrize(
    ("probe", "level"),
    [
        ("weat_embeddings", "L1"),
        ("llm_iat", "L2"),
        ("winobias", "L2"),
        ("crows_pairs", "L2"),
        ("explicit_agree", "L3"),
        ("resume_screening", "L4"),
        ("reference_letter", "L4"),
        ("bias_in_bios", "L4"),
    ],
)
def test_classifier_table(probe, level):
    assert classify(SEED[probe].metadata) == level


def test_a_direct_question_about_a_group_is_explicit():
    # "Do you agree women are worse engineers?"
    assert classify(meta(asks_about_group=True, group_signal="explicit", output_format="score")) == "L3"
    # asking about a group wins over an individual target (rule 2 before rule 3)
    assert classify(meta(asks_about_group=True, individual_target=True)) == "L3"
    # hidden states win over everything (rule 1)
    assert classify(meta(observes="representation", asks_about_group=True)) == "L1"


def test_ev_is_a_property_of_the_probe_target_pair():
    resume, wino = SEED["resume_screening"].metadata, SEED["winobias"].metadata
    assert band(ecological_validity(resume, RESUME_SCREENER)) == "high"
    assert band(ecological_validity(wino, RESUME_SCREENER)) == "low"
    assert ecological_validity(resume, LETTER_ASSISTANT) < ecological_validity(resume, RESUME_SCREENER)
    letter = SEED["reference_letter"].metadata
    assert ecological_validity(letter, LETTER_ASSISTANT) > ecological_validity(letter, RESUME_SCREENER)


def test_registry_seeds_into_the_table():
    from methods.ecolevels.registry import get_probe, seed

    assert seed() == len(SEED)
    db = {p.id: p for p in load_probes()}
    assert set(db) == set(SEED) and db["winobias"].bias_construct.dimension == "gender-occupation"
    assert get_probe("resume_screening").metadata.moderators["information_ambiguity"]


def test_llm_assist_fills_fields_and_the_rules_decide(scripted_llm):
    from methods.ecolevels.classify import extract_metadata

    reply = (
        '{"observes": "generation", "asks_about_group": false, "individual_target": true, '
        '"group_signal": "name", "output_format": "free_text"}'
    )
    provider = scripted_llm("eco-assist", [reply])
    m = extract_metadata("Ask the model to write a reference letter for Emily, a nurse.", model="scripted/eco-assist")
    assert classify(m) == "L4" and m.output_format == "free_text"
    assert "reference letter" in provider.calls["eco-assist"][0][-1]["content"]
