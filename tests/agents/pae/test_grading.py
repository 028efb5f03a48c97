"""The oracle's string matching (WebArena semantics, deterministic fuzzy approximation)."""

from __future__ import annotations

from agents.pae.sites.grading import durations, grade


def test_exact_and_must_include():
    assert grade({"exact_match": "15213"}, " 15213. ") == 1.0
    assert grade({"exact_match": "15213"}, "The zip is 15213") == 0.0
    assert grade({"must_include": ["Ohio", "New York"]}, "Ohio, Maryland, New York") == 1.0
    assert grade({"must_include": ["Ohio", "New York"]}, "Ohio and Maryland") == 0.0
    assert grade({"must_include": ["Yes"]}, "yes, it can") == 1.0
    assert grade({"must_include": ["Yes"]}, "eyes") == 0.0  # one-word references match whole tokens
    assert grade({"must_include": ["x"]}, None) == 0.0


def test_fuzzy_durations_distances_and_na():
    assert durations("driving: 1h 35min, walk less than 1 minute, 3:30") == ["95", "<1", "210"]
    ref = {"fuzzy_match": ["driving: 13min", "walking: 1h 35min"]}
    assert grade(ref, "Driving takes 13min and walking 1h 35min") == 1.0
    assert grade(ref, "Driving takes 13min and walking 1h 30min") == 0.0
    assert grade({"fuzzy_match": "N/A"}, "N/A") == 1.0
    assert grade({"fuzzy_match": "N/A"}, "There is none nearby") == 1.0
    assert grade({"fuzzy_match": "N/A"}, "Fuku Tea") == 0.0
    assert grade({"fuzzy_match": ["There is no airport within 5 km of Carnegie Mellon University"]}, "None") == 1.0
    assert (
        grade(
            {"fuzzy_match": ["Wyndham Pittsburgh University Cente: 375m", "The Oaklander Hotel: 338m"]},
            "Oaklander 338m; Wyndham 375m",
        )
        == 1.0
    )
    assert (
        grade(
            {"fuzzy_match": ["The order is Princeton University, Yale University, Harvard University"]},
            "Princeton University, Yale University, Harvard University",
        )
        == 1.0
    )


def test_one_of_and_combined_kinds():
    assert grade({"one_of": ["agile", "spry"]}, "spry") == 1.0
    both = {"must_include": ["Hyatt Regency Pittsburgh International Airport"], "fuzzy_match": ["Time: 15min"]}
    assert grade(both, "Hyatt Regency Pittsburgh International Airport, 15min") == 1.0
    assert grade(both, "Hyatt Regency Pittsburgh International Airport, 20min") == 0.0
